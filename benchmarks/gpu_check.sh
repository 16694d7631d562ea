#!/usr/bin/env bash
# The GPU check from a bare checkout: set up Python, then run benchmarks/gpu_check.py (docs/gpu.md).
#
#   benchmarks/gpu_check.sh [--wheels DIR] [gpu_check.py options...]     e.g. --json /tmp/gpu.json
#
# Python: $PYTHON, else python3. If that Python has torch (a GPU machine's image), a venv is made on
# top of it (--system-site-packages: its CUDA build of torch is used as it is); otherwise a plain
# venv gets `pip install torch==2.13.0` (the CPU build; needs PyPI). The project's other
# dependencies that are missing are installed into the venv: from DIR with --wheels DIR (offline:
# `pip install --no-index --find-links DIR`), else from PyPI. The project itself is not installed:
# it runs from this checkout (PYTHONPATH). The venv is $FZMJ_GPU_VENV (default /tmp/fzmj-gpu-venv),
# the Numba cache $NUMBA_CACHE_DIR (default /tmp/fzmj-numba-cache): a second run starts warm.
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=""
if [ "${1:-}" = "--wheels" ]; then
    wheels="$2"
    shift 2
fi
py="${PYTHON:-python3}"
venv="${FZMJ_GPU_VENV:-/tmp/fzmj-gpu-venv}"
t0=$SECONDS
if [ ! -x "$venv/bin/python" ]; then
    if "$py" -c "import torch" 2>/dev/null; then
        "$py" -m venv --system-site-packages "$venv"
    else
        "$py" -m venv "$venv"
        "$venv/bin/python" -m pip install -q torch==2.13.0
    fi
fi
vpy="$venv/bin/python"
# the import names of the runtime dependencies (pyproject.toml) -> their distribution names
missing=$("$vpy" - <<'EOF'
import importlib.util
need = {"numpy": "numpy", "numba": "numba", "gymnasium": "gymnasium", "pettingzoo": "pettingzoo",
        "torch": "torch", "tensorboard": "tensorboard", "yaml": "pyyaml", "tqdm": "tqdm",
        "matplotlib": "matplotlib", "openskill": "openskill"}
print(" ".join(dist for mod, dist in need.items() if importlib.util.find_spec(mod) is None))
EOF
)
if [ -n "$missing" ]; then
    echo "gpu_check.sh: installing $missing"
    if [ -n "$wheels" ]; then
        "$vpy" -m pip install -q --no-index --find-links "$wheels" $missing
    else
        "$vpy" -m pip install -q $missing
    fi
fi
echo "gpu_check.sh: Python ready in $((SECONDS - t0)) s ($vpy)"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/fzmj-numba-cache}"
export PYTHONUNBUFFERED=1
exec "$vpy" benchmarks/gpu_check.py "$@"
