"""The shipped (generic) kernels: built once, loaded where the host cache has none, and never
where they are not the code of these sources (fzmj_env/_shipped_kernels.py).

A small guarded package in a temporary folder stands in for ours (building the real kernels takes
a minute; .ci/wheel_test.sh checks them with `fzmj-warmup --check` from the wheel). Each step runs
in a fresh process: Numba reads NUMBA_CPU_NAME / NUMBA_CACHE_DIR when it is imported."""

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

KERNEL = """\
from numba import njit

from .helper import helper


@njit(cache=True)
def twice(x):
    return 2 * helper(x)
"""
HELPER = """\
from numba import njit


@njit(cache=True)
def helper(x):
    return x + 1
"""
# in the child: guard the package (as our packages' __init__ do), call the kernel, report
RUN = """\
import json, sys
import numba
import fzmj_env
from fzmj_env import _numba_cache, _shipped_kernels
_numba_cache.clear_stale_cache(sys.argv[1])
if sys.argv[2] == "host":
    _shipped_kernels.compile_for_this_cpu()  # fzmj-warmup --host
from pkg.kern import twice
value = twice(20)
if sys.argv[2] == "export":
    _shipped_kernels.export_shipped()
print(json.dumps({"value": value, "shipped": _shipped_kernels.loaded, "cpu": numba.config.CPU_NAME,
                  "misses": sum(twice.stats.cache_misses.values())}))
"""


@pytest.fixture()
def built(tmp_path):
    """A package with a kernel calling a kernel of another file, its shipped generic cache built."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(KERNEL)
    (pkg / "helper.py").write_text(HELPER)
    out = _run(tmp_path, "export", generic=True, cache="build")
    assert out["value"] == 42 and out["cpu"] == "generic" and out["shipped"] == []
    assert (pkg / "_kernels" / "manifest.json").is_file()
    return tmp_path


def _run(root: Path, mode: str, generic: bool = False, cache: str = "host") -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(root / cache), "PYTHONPATH": f"{root}{os.pathsep}{REPO}"}
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "FZMJ_SHIPPED_KERNELS"):
        env.pop(name, None)
    if generic:
        env.update(NUMBA_CPU_NAME="generic", FZMJ_SHIPPED_KERNELS="0")
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(root / "pkg"), mode], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["stderr"] = proc.stderr
    return out


def test_a_cold_host_cache_loads_the_shipped_kernels_for_ours_only(built):
    out = _run(built, "run")
    assert out["value"] == 42
    assert out["shipped"] == ["twice"] and out["misses"] == 0  # nothing compiled (helper is linked in)
    assert out["cpu"] is None  # the process's own Numba setting is untouched
    assert "compiling" not in out["stderr"]
    # a kernel outside the guarded packages is not looked up there (it compiles as always)
    code = "import fzmj_env\nfrom numba import njit\n@njit\ndef f(x):\n    return x\nassert f(1) == 1\n"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO, timeout=300).returncode == 0


def test_an_edited_kernel_does_not_load_its_shipped_entry(built):
    kern = built / "pkg" / "kern.py"
    kern.write_text(KERNEL.replace("2 * helper(x)", "3 * helper(x)"))
    out = _run(built, "run")
    assert out["value"] == 63  # the edited source ran, not the shipped code
    assert out["shipped"] == [] and out["misses"] == 1


def test_an_edit_in_another_file_turns_the_shipped_kernels_off(built):
    # Numba keys an entry on its own file only: the package fingerprint catches the callee's edit
    (built / "pkg" / "helper.py").write_text(HELPER.replace("x + 1", "x + 2"))
    out = _run(built, "run")
    assert out["value"] == 44 and out["shipped"] == []


def test_a_truncated_shipped_file_is_skipped_with_one_line(built):
    files = list((built / "pkg" / "_kernels").glob("kern.twice*.nbc"))
    assert files
    for f in files:
        f.write_bytes(f.read_bytes()[:40])
    out = _run(built, "run")
    assert out["value"] == 42 and out["shipped"] == ["helper"] and out["misses"] == 1
    lines = [line for line in out["stderr"].splitlines() if "shipped kernel" in line]
    assert len(lines) == 1 and "twice" in lines[0] and "compiling it" in lines[0]


def test_a_shipped_file_replaced_by_another_kernels_is_skipped_with_one_line(built):
    # the data file of `twice` overwritten with that of `helper`: Numba's own checks let it run
    shipped = built / "pkg" / "_kernels"
    [twice], [helper] = shipped.glob("kern.twice*.nbc"), shipped.glob("helper.helper*.nbc")
    twice.write_bytes(helper.read_bytes())
    out = _run(built, "run")
    assert out["value"] == 42 and out["shipped"] == ["helper"] and out["misses"] == 1
    lines = [line for line in out["stderr"].splitlines() if "shipped kernel" in line]
    assert lines == [
        f"fzmj: the shipped kernel twice in {shipped} is not the file that was built "
        f"({twice.name}: its checksum differs from the manifest's); compiling it"
    ]


def test_a_manifest_without_checksums_is_not_used(built):
    manifest = built / "pkg" / "_kernels" / "manifest.json"
    m = json.loads(manifest.read_text())
    assert sorted(m["files"]) == sorted(
        p.relative_to(manifest.parent).as_posix() for p in manifest.parent.glob("*.nb?")
    )
    manifest.write_text(json.dumps({k: v for k, v in m.items() if k != "files"}))
    out = _run(built, "run")
    assert out["value"] == 42 and out["shipped"] == []


def test_a_shipped_cache_of_another_numba_is_never_loaded(built):
    # the index as another Numba version writes it: its version first (and the manifest says so too)
    for index in (built / "pkg" / "_kernels").glob("*.nbi"):
        data = index.read_bytes()
        with open(index, "rb") as f:
            pickle.load(f)
            rest = f.read()
        assert rest and data.endswith(rest)
        index.write_bytes(pickle.dumps("0.1.0", protocol=-1) + rest)
    out = _run(built, "run")
    assert out["value"] == 42 and out["shipped"] == [] and "could not be read" not in out["stderr"]
    manifest = built / "pkg" / "_kernels" / "manifest.json"
    m = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**m, "numba": "0.1.0"}))
    (built / "host").rename(built / "host-old")
    assert _run(built, "run")["shipped"] == []


def test_another_target_triple_is_not_loaded(built):
    manifest = built / "pkg" / "_kernels" / "manifest.json"
    m = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**m, "magic": ["aarch64-unknown-linux-gnu", *m["magic"][1:]]}))
    assert _run(built, "run")["shipped"] == []


def test_a_damaged_manifest_is_one_line(built):
    (built / "pkg" / "_kernels" / "manifest.json").write_text("{not json")
    out = _run(built, "run")
    assert out["value"] == 42 and out["shipped"] == []
    assert textwrap.dedent(out["stderr"]).count("could not be read") == 1


def test_warmup_host_compiles_for_this_cpu_and_later_runs_use_it(built):
    out = _run(built, "host")
    assert out["value"] == 42 and out["shipped"] == [] and out["misses"] == 1
    later = _run(built, "run")
    assert later["shipped"] == [] and later["misses"] == 0  # the host cache's entry, found first
