# Sourced by benchmarks/gpu_check.sh and benchmarks/gpu_recipe.sh (from the repository root, with
# the caller's "$@"): makes a Python able to run the project from this checkout on a GPU machine.
# Sets `vpy` (that Python), PYTHONPATH (this checkout, and the installed extras), NUMBA_CACHE_DIR
# and PYTHONUNBUFFERED; a leading `--wheels DIR` is taken off "$@" (offline: every package from DIR).
# What it expects and installs: docs/gpu.md, "What it expects".
wheels=""
if [ "${1:-}" = "--wheels" ]; then
    wheels="$2"
    shift 2 # the caller's "$@": this file is sourced
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
    echo "$(basename "$0"): installing $missing"
    # shellcheck disable=SC2086
    "$vpy" -m pip install -q ${pip_from[@]+"${pip_from[@]}"} ${target[@]+"${target[@]}"} $missing
fi
echo "$(basename "$0"): Python ready in $((SECONDS - t0)) s ($vpy)"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/fzmj-numba-cache}"
export PYTHONUNBUFFERED=1
