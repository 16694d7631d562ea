#!/usr/bin/env bash
# Usage: bash carry/restore.sh [NAME]   (NAME: a folder of carry/; default: the only one there)
# Puts issue 56's long run back where the next session resumes it, when the machine no longer has
# /root/longrun (its folder was lost once with its machine): a frozen clone of this repository, a
# venv, the run folder from carry/NAME/, and start.sh. The clone is checked out at the commit the
# run was started on (carry/NAME/commit): a resume must run the code that began the run. Then resume with
#   cd /root/longrun && (setsid ./start.sh > /dev/null 2>&1 &)
# The carried checkpoints go when the run has ended and its results are in docs/results/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
LR=${LR:-/root/longrun}
if [ $# -ge 1 ]; then NAME=$1; else
  mapfile -t found < <(cd "$HERE/carry" && for d in */; do [ -f "$d/latest.pt" ] && echo "${d%/}"; done)
  [ ${#found[@]} -eq 1 ] || { echo "restore: name the run: carry/ holds ${#found[@]} (${found[*]:-none})" >&2; exit 2; }
  NAME=${found[0]}
fi
for f in latest.pt bc.pt commit; do
  [ -f "$HERE/carry/$NAME/$f" ] || { echo "restore: carry/$NAME/$f not found" >&2; exit 2; }
done
RUN=$LR/runs/$NAME
if [ -f "$RUN/checkpoints/latest.pt" ]; then echo "restore: $RUN already holds a run; nothing done" >&2; exit 0; fi
mkdir -p "$RUN/checkpoints" "$RUN/rule/curve"
C=$HERE/carry/$NAME
COMMIT=$(cat "$C/commit")
if [ ! -d "$LR/src" ]; then git clone -q "$HERE" "$LR/src" && git -C "$LR/src" checkout -q "$COMMIT"; fi
[ "$(git -C "$LR/src" rev-parse HEAD)" = "$(git -C "$HERE" rev-parse "$COMMIT^{commit}")" ] ||
  { echo "restore: $LR/src is not at $COMMIT, the commit the run began on" >&2; exit 2; }
if [ ! -x "$LR/venv/bin/fzmj-train" ]; then
  python3 -m venv "$LR/venv"
  "$LR/venv/bin/pip" install -q torch==2.13.0
  "$LR/venv/bin/pip" install -q "$LR/src"
fi
cp "$C"/bc.pt "$C"/latest.pt "$RUN/checkpoints/"
[ -f "$C/best.pt" ] && cp "$C/best.pt" "$RUN/checkpoints/"
cp "$C"/paired.jsonl "$C"/train.log "$RUN/"
cp "$C"/curve/*.json "$RUN/rule/curve/" 2>/dev/null || true
cat > "$LR/start.sh" <<SH
#!/bin/bash
cd $LR
echo 19 > /proc/self/autogroup 2>/dev/null  # nice applies only inside an autogroup: lower the whole group
exec nice -n 19 venv/bin/fzmj-train --resume runs/$NAME/checkpoints/latest.pt --set torch_threads=2 --no-progress >> $LR/$NAME.out 2>&1
SH
chmod +x "$LR/start.sh"
echo "restore: $RUN is back at update $("$LR/venv/bin/python" -c "import torch,sys; print(torch.load(sys.argv[1], map_location='cpu', weights_only=False)['update'])" "$RUN/checkpoints/latest.pt")"
