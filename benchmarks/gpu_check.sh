#!/usr/bin/env bash
# The GPU check from a bare checkout: set up Python, then run benchmarks/gpu_check.py (docs/gpu.md).
#
#   benchmarks/gpu_check.sh [--wheels DIR] [gpu_check.py options...]     e.g. --json /tmp/gpu.json
#
# Python: $PYTHON, else python3. If that Python has torch (a GPU machine's image: its CUDA build of
# torch is used as it is), the missing dependencies are installed next to it with
# `pip install --no-deps --target $FZMJ_GPU_SITE` (default /tmp/fzmj-gpu-site), put first on
# PYTHONPATH (a venv made from a venv's Python would not see that venv's torch). Otherwise a venv
# ($FZMJ_GPU_VENV, default /tmp/fzmj-gpu-venv) gets `pip install torch==2.13.0` (the CPU build;
# needs PyPI) and the missing dependencies. With --wheels DIR everything comes from DIR only
# (offline: `pip install --no-index --find-links DIR`), else from PyPI. The project itself is not
# installed: it runs from this checkout (PYTHONPATH). The Numba cache is $NUMBA_CACHE_DIR
# (default /tmp/fzmj-numba-cache): a second run starts warm.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/gpu_python.sh
source benchmarks/gpu_python.sh # sets vpy (the Python to use), PYTHONPATH, NUMBA_CACHE_DIR; shifts --wheels DIR
exec "$vpy" benchmarks/gpu_check.py "$@"
