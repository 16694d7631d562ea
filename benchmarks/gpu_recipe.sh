#!/usr/bin/env bash
# The strongest recipe on one GPU, across calls of at most 600 s: set up Python, then run
# benchmarks/gpu_recipe.py (docs/gpu.md, "The recipe on a GPU").
#
#   benchmarks/gpu_recipe.sh [--wheels DIR] [gpu_recipe.py options...]    e.g. --out "$OUT"
#
# Each call trains until its budget, stops the trainer at a checkpoint, and copies the run's
# checkpoints, curve and logs to --out (default $OUT); the next call resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/gpu_python.sh
source benchmarks/gpu_python.sh # sets vpy (the Python to use), PYTHONPATH, NUMBA_CACHE_DIR; shifts --wheels DIR
exec "$vpy" benchmarks/gpu_recipe.py "$@"
