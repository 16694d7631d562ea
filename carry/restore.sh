#!/usr/bin/env bash
# Puts issue 56's long run back where the next session resumes it, when the machine no longer has
# /root/longrun (its folder was lost once with its machine): a frozen clone of this repository, a
# venv, the run folder from carry/o130_res32_ent/, and start.sh. Then resume with
#   cd /root/longrun && (setsid ./start.sh > /dev/null 2>&1 &)
# The carried checkpoints go when the run has ended and its results are in docs/results/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
LR=${LR:-/root/longrun}
RUN=$LR/runs/o130_res32_ent
if [ -f "$RUN/checkpoints/latest.pt" ]; then echo "restore: $RUN already holds a run; nothing done" >&2; exit 0; fi
mkdir -p "$RUN/checkpoints" "$RUN/rule/curve"
[ -d "$LR/src" ] || git clone -q "$HERE" "$LR/src"
if [ ! -x "$LR/venv/bin/fzmj-train" ]; then
  python3 -m venv "$LR/venv"
  "$LR/venv/bin/pip" install -q torch==2.13.0
  "$LR/venv/bin/pip" install -q "$LR/src"
fi
C=$HERE/carry/o130_res32_ent
cp "$C"/bc.pt "$C"/latest.pt "$RUN/checkpoints/"
[ -f "$C/best.pt" ] && cp "$C/best.pt" "$RUN/checkpoints/"
cp "$C"/paired.jsonl "$C"/train.log "$RUN/"
cp "$C"/curve/*.json "$RUN/rule/curve/" 2>/dev/null || true
cat > "$LR/start.sh" <<SH
#!/bin/bash
cd $LR
echo 19 > /proc/self/autogroup 2>/dev/null  # nice applies only inside an autogroup: lower the whole group
exec nice -n 19 venv/bin/fzmj-train --resume runs/o130_res32_ent/checkpoints/latest.pt --set torch_threads=2 --no-progress >> $LR/o130.out 2>&1
SH
chmod +x "$LR/start.sh"
echo "restore: $RUN is back at update $("$LR/venv/bin/python" -c "import torch,sys; print(torch.load(sys.argv[1], map_location='cpu', weights_only=False)['update'])" "$RUN/checkpoints/latest.pt")"
