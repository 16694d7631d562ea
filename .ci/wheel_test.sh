#!/usr/bin/env bash
# The wheel works outside the checkout: build it, install it into a clean venv (CPU torch first,
# everything else from PyPI through pip's cache), and from a folder that is not the repository
# train a shipped config by name for a few updates, evaluate `pretrained` (its weights are package
# data), write a replay page from a record the evaluation kept, and make the gym env.
#   .ci/wheel_test.sh [--install-only | --checks-only] [WORK_DIR]
# WORK_DIR defaults to a fresh temporary folder, removed at the end. .ci/run splits the two halves
# (--install-only WORK, later --checks-only WORK) so the install overlaps the other venvs' installs.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-python3}"
PHASE=all
case "${1:-}" in
    --install-only) PHASE=install; shift ;;
    --checks-only) PHASE=checks; shift ;;
esac
if [ "$PHASE" != all ] && [ $# -lt 1 ]; then echo "wheel_test.sh: --install-only and --checks-only need a WORK_DIR" >&2; exit 2; fi
if [ $# -ge 1 ]; then WORK="$(mkdir -p "$1" && cd "$1" && pwd)"; else WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT; fi
t0=$SECONDS
if [ "$PHASE" != checks ]; then

# build from a copy of the files git knows (tracked, or untracked and not ignored): an in-tree
# build would leave build/ in the checkout, whose stale files setuptools puts in the next wheel
mkdir -p "$WORK/src"
git -C "$REPO" ls-files -co --exclude-standard -z | tar -C "$REPO" --null -T - -cf - | tar -C "$WORK/src" -xf -
# the kernels for a generic x86-64 go into the wheel (docs/engine.md, "Kernels in the wheel")
(cd "$WORK/src" && "$PY" -m fzmj_env.build_cache)
"$PY" -m pip wheel -q --no-deps -w "$WORK/dist" "$WORK/src"
WHEEL="$(ls "$WORK"/dist/fzmj-*.whl)"
echo "wheel: $(basename "$WHEEL"), $(du -k "$WHEEL" | cut -f1) KiB"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q torch==2.13.0      # the CPU build; a bare `torch` pulls CUDA
"$WORK/venv/bin/python" -m pip install -q "$WHEEL"
echo "wheel built and installed: $(basename "$WHEEL"), $((SECONDS - t0)) s"
fi
[ "$PHASE" = install ] && exit 0
WHEEL="$(ls "$WORK"/dist/fzmj-*.whl)"
t1=$SECONDS

mkdir -p "$WORK/outside"
cd "$WORK/outside"                                 # no checkout here: only what the wheel installed
export PATH="$WORK/venv/bin:$PATH"
unset PYTHONPATH
python - "$REPO" "$WHEEL" <<'EOF'
import importlib.metadata
import sys
from pathlib import Path

import fzmj.agents
import fzmj.train
import fzmj_env

repo = Path(sys.argv[1]).resolve()
for mod in (fzmj_env, fzmj.agents, fzmj.train):
    where = Path(mod.__file__).resolve()
    assert repo not in where.parents, f"{mod.__name__} imported from the checkout: {where}"
print("imports from", Path(fzmj_env.__file__).parent.parent)
# one version: the wheel's name, its metadata and both packages (fzmj_env/_version.py)
versions = {Path(sys.argv[2]).name.split("-")[1], importlib.metadata.version("fzmj"), fzmj_env.__version__, fzmj.__version__}
assert len(versions) == 1, f"the wheel reports several versions: {versions}"
print("version", versions.pop())
EOF
test "$(fzmj-train --version)" = "fzmj-train $(python -c 'import fzmj_env; print(fzmj_env.__version__)')"
# the shipped kernels serve a fresh install: nothing to compile (exit 1 if anything did)
fzmj-warmup --all --check
fzmj-train --list-configs
# every first run below is served by the shipped kernels: none may print the compile notice
: >"$WORK/stderr.log"
exec 2> >(tee -a "$WORK/stderr.log" >&2)
# the documented recipe by name, cut to 2 updates of 32 x 16 steps (a small warm start, one evaluation)
fzmj-train --config ppo_default --set runs_dir=runs --set run_name=wheel --set num_tables=32 \
    --set num_steps=16 --set total_timesteps=1024 --set bc_decisions=2048 --set bc_eval_hands=0 \
    --set eval_every=2 --set eval_hands=8
test -f runs/wheel/checkpoints/latest.pt
fzmj-eval --agents pretrained random --hands 8 --no-progress --out eval.json --save-records records
fzmj-eval --agents ppo:runs/wheel/checkpoints/latest.pt random --hands 4 --no-progress
record="$(ls records/*.json | head -n 1)"
fzmj-replay "$record" -o replay.html --review pretrained
grep -q "<svg" replay.html
python - <<'EOF'
import gymnasium as gym
import numpy as np

import fzmj_env  # noqa: F401  (registers fzmj/SingleSeat-v0)

env = gym.make("fzmj/SingleSeat-v0")
obs, info = env.reset(seed=0)
steps = 0
done = False
while not done:
    action = int(np.flatnonzero(info["action_mask"])[0])
    obs, reward, term, trunc, info = env.step(action)
    done, steps = term or trunc, steps + 1
print(f"gym env: fzmj/SingleSeat-v0, one hand in {steps} steps, reward {reward}")
EOF
if grep -q "^fzmj: compiling" "$WORK/stderr.log"; then
    echo "wheel test: a first run from the wheel compiled kernels (the shipped cache missed some)" >&2
    exit 1
fi
echo "wheel test passed: $(basename "$WHEEL"); checks $((SECONDS - t1)) s"
