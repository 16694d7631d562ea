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
wheels=""
if [ "${1:-}" = "--wheels" ]; then
    wheels="$2"
    shift 2
fi
py="${PYTHON:-python3}"
site="${FZMJ_GPU_SITE:-/tmp/fzmj-gpu-site}"
t0=$SECONDS
pip_from=()
if [ -n "$wheels" ]; then
    pip_from=(--no-index --find-links "$wheels")
fi
if "$py" -c "import torch" 2>/dev/null; then
    vpy="$py"
    target=(--no-deps --target "$site") # every missing distribution is named below, its needs too
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
else
    venv="${FZMJ_GPU_VENV:-/tmp/fzmj-gpu-venv}"
    if [ ! -x "$venv/bin/python" ]; then
        "$py" -m venv "$venv"
        "$venv/bin/python" -m pip install -q ${pip_from[@]+"${pip_from[@]}"} torch==2.13.0
    fi
    vpy="$venv/bin/python"
    target=()
fi
# the import names of the runtime dependencies (pyproject.toml, and what gymnasium and pettingzoo
# need) and their distribution names
missing=$("$vpy" -c '
import importlib.util
need = {"numpy": "numpy", "numba": "numba", "gymnasium": "gymnasium", "pettingzoo": "pettingzoo",
        "farama_notifications": "farama-notifications", "cloudpickle": "cloudpickle",
        "typing_extensions": "typing-extensions", "torch": "torch", "tensorboard": "tensorboard",
        "yaml": "pyyaml", "tqdm": "tqdm", "matplotlib": "matplotlib", "openskill": "openskill"}
print(" ".join(dist for mod, dist in need.items() if importlib.util.find_spec(mod) is None))
')
if [ -n "$missing" ]; then
    echo "gpu_check.sh: installing $missing"
    # shellcheck disable=SC2086
    "$vpy" -m pip install -q ${pip_from[@]+"${pip_from[@]}"} ${target[@]+"${target[@]}"} $missing
fi
echo "gpu_check.sh: Python ready in $((SECONDS - t0)) s ($vpy)"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/fzmj-numba-cache}"
export PYTHONUNBUFFERED=1
exec "$vpy" benchmarks/gpu_check.py "$@"
