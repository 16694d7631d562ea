"""One version everywhere: ``fzmj_env/_version.py`` is the single source; the package, the installed
metadata (what the wheel reports), every command's ``--version``, CHANGELOG.md's newest release and
CITATION.cff agree with it."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from pathlib import Path

import pytest

import fzmj
import fzmj_env
from fzmj_env._version import __version__

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = dict(re.findall(r'^(fzmj-[a-z]+) = "([\w.]+:\w+)"', (ROOT / "pyproject.toml").read_text(), re.M))


def test_the_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__


def test_the_packages_and_the_installed_metadata_say_the_same():
    assert fzmj_env.__version__ == fzmj.__version__ == __version__
    installed = importlib.metadata.version("fzmj")
    assert installed == __version__, f"installed metadata says {installed}: reinstall (pip install -e .)"


def test_the_wheel_reads_its_version_from_the_single_source():
    from setuptools.config.pyprojecttoml import read_configuration

    project = read_configuration(ROOT / "pyproject.toml")["project"]
    assert project["version"] == __version__
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in declared and "version" in declared["dynamic"], "pyproject.toml states its own version"


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_every_command_says_its_version(command, capsys):
    module, func = SCRIPTS[command].split(":")
    main = getattr(importlib.import_module(module), func)
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"{command} {__version__}\n"


def test_the_changelog_and_the_citation_name_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d[^\]]*)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert releases and releases[0][0] == __version__, f"CHANGELOG.md's newest release is {releases[:1]}"
    assert changelog.index("## [Unreleased]") < changelog.index(f"## [{__version__}]")
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.M)
    assert re.search(rf'^version: "{re.escape(__version__)}"$', cff, re.M)
    assert re.search(rf'^date-released: "{releases[0][1]}"$', cff, re.M)
    for key in ("message", "title", "authors", "license"):
        assert re.search(rf"^{key}:", cff, re.M), key


def test_the_docs_show_this_version():
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    shown = re.findall(r"`fzmj-train --version` → `fzmj-train ([^`]+)`", reference)
    assert shown == [__version__], f"docs/reference.md, 'Versions', shows {shown}"
