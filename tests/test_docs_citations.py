"""Every rules section the code cites (R1, R9.5, P2, ...) exists in docs/rules.md or docs/presets.md.

The code's comments, docstrings and test names cite the rules contract by section number; a
citation with no section in the repository would send a reader nowhere. Each section is a
heading with an explicit anchor (``<a id="r9.5"></a>``), so links such as ``presets.md#p2``
resolve too.
"""

import pathlib
import re

import pytest

from fzmj_env.core.state import SCHEME_NAMES

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CODE_DIRS = ("fzmj_env", "agents", "train", "fzmj", "tests")
CITATION = re.compile(r"\b(R\d+(?:\.\d+)*|P\d)\b")
HEADING = re.compile(r"^#{2,3} (R\d+(?:\.\d+)*|P\d)\b", re.MULTILINE)
ANCHOR = re.compile(r'<a id="([a-z0-9.]+)"></a>\n#{2,3} (\S+?)\.?\s')
SELF = pathlib.Path(__file__).resolve()
LINK = re.compile(r"\((rules|presets)\.md#([a-z0-9.]+)\)")


def _sections():
    """{section: (file, has an anchor)} over the two contract pages."""
    found = {}
    for name in ("rules.md", "presets.md"):
        text = (DOCS / name).read_text(encoding="utf-8")
        anchors = {a: h for a, h in ANCHOR.findall(text)}
        for sec in HEADING.findall(text):
            assert sec not in found, f"section {sec} is defined twice"
            found[sec] = (name, anchors.get(sec.lower()) == sec)
    return found


def _citations():
    """(file:line, section) for every citation in the source trees."""
    out = []
    for d in CODE_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            if ".venv" in path.parts or path == SELF:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for sec in CITATION.findall(line):
                    out.append((f"{path.relative_to(ROOT)}:{n}", sec))
    return out


def test_every_section_has_an_anchor():
    sections = _sections()
    assert {s for s in sections if s.startswith("R")} >= {f"R{i}" for i in range(1, 14)}
    # P0 (notation), then one section per scheme of the engine (a preset of a known scheme adds none)
    assert {s for s in sections if s.startswith("P")} == {f"P{i}" for i in range(len(SCHEME_NAMES) + 1)}
    missing = [s for s, (_, anchored) in sections.items() if not anchored]
    assert not missing, f"sections without an <a id> anchor: {missing}"


def test_every_citation_in_the_code_resolves():
    sections = _sections()
    cites = _citations()
    assert len(cites) > 100  # the scan found the code's citations
    unresolved = [f"{where}: {sec}" for where, sec in cites if sec not in sections]
    assert not unresolved, "citations with no section in docs/rules.md or docs/presets.md:\n" + "\n".join(unresolved)


def test_links_between_the_docs_resolve():
    sections = {s.lower(): f for s, (f, _) in _sections().items()}
    bad = []
    for path in sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]:
        for page, anchor in LINK.findall(path.read_text(encoding="utf-8")):
            if sections.get(anchor) != f"{page}.md":
                bad.append(f"{path.name}: {page}.md#{anchor}")
    assert not bad, f"links to sections that do not exist: {bad}"


@pytest.mark.parametrize("text", ["see R99 here", "under P7", "R9.9 says"])
def test_an_unknown_citation_is_caught(text):
    sections = _sections()
    assert any(sec not in sections for sec in CITATION.findall(text))


def test_no_mention_of_contract_files_outside_the_repository():
    """The contract lives in docs/: nothing points at RULES.md / PRESETS.md any more."""
    paths = [ROOT / "README.md", *DOCS.glob("*.md")]
    for d in CODE_DIRS:
        paths += [p for p in (ROOT / d).rglob("*.py") if ".venv" not in p.parts and p != SELF]
    stale = [str(p.relative_to(ROOT)) for p in paths if re.search(r"\b(RULES|PRESETS)\.md", p.read_text("utf-8"))]
    assert not stale, f"mentions of RULES.md / PRESETS.md: {stale}"
