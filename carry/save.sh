#!/usr/bin/env bash
# Usage: bash carry/save.sh NAME   (the run folder /root/longrun/runs/NAME, or $LR/runs/NAME)
# Copies what resuming a long run needs into carry/NAME/ (commit it at a session's end), the
# counterpart of carry/restore.sh: latest.pt, bc.pt, best.pt (when there is one), paired.jsonl,
# train.log, the curve points played so far, and the commit its frozen clone runs.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
LR=${LR:-/root/longrun}
NAME=${1:?usage: carry/save.sh NAME}
RUN=$LR/runs/$NAME
for f in checkpoints/latest.pt checkpoints/bc.pt paired.jsonl train.log; do
  [ -f "$RUN/$f" ] || { echo "save: $RUN/$f not found" >&2; exit 2; }
done
C=$HERE/carry/$NAME
mkdir -p "$C/curve"
git -C "$LR/src" rev-parse HEAD > "$C/commit.tmp" && mv "$C/commit.tmp" "$C/commit"
for f in checkpoints/latest.pt checkpoints/bc.pt checkpoints/best.pt paired.jsonl train.log; do
  [ -f "$RUN/$f" ] || continue
  cp "$RUN/$f" "$C/$(basename "$f").tmp" && mv "$C/$(basename "$f").tmp" "$C/$(basename "$f")"
done
cp "$RUN"/rule/curve/u*.json "$C/curve/" 2>/dev/null || true
upd=$("$LR/venv/bin/python" -c "import torch,sys; print(torch.load(sys.argv[1], map_location='cpu', weights_only=False)['update'])" "$C/latest.pt")
echo "save: carry/$NAME holds the run at update $upd (its latest.pt); $(du -sh "$C" | cut -f1)"
