"""A static reading of our imports: modules named by their paths, every import statement (at the
top of a file or inside a function) an arrow. ``tests/test_layers.py`` checks the picture it
gives: arrows only point down the layers of docs/layers.md, and no arrows close a circle.

Run it by hand for the picture itself: ``python tests/import_graph.py`` prints each arrow, and
``--cycles`` only the circles.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("fzmj_env", "fzmj")  # the two installed top-level names; their folders are their paths


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of ours by dotted name, read off its path (links are not followed)."""
    out: dict[str, Path] = {}
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join(rel)] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) for each import in the file; relative imports resolved, and ``from pkg
    import sub`` read as an arrow to ``pkg.sub`` when ``sub`` is a module of ours."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = ".".join(base[: len(base) - node.level + 1])
                mod = f"{parent}.{node.module}" if node.module else parent
            else:
                mod = node.module
            for a in node.names:
                sub = f"{mod}.{a.name}"
                found.append((node.lineno, sub if sub in known else mod))
    return found


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the modules of ours it imports (itself excluded)."""
    files = module_files(root)
    known = set(files)
    out = {}
    for name, path in files.items():
        targets = set()
        for _, target in imports_of(name, path, known):
            while target and target not in known:  # `import fzmj_env.core.hand.x` -> the module part
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        out[name] = targets
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


if __name__ == "__main__":
    g = graph()
    if "--cycles" in sys.argv:
        for comp in cycles(g):
            print(" <-> ".join(comp))
    else:
        for a in sorted(g):
            for b in sorted(g[a]):
                print(f"{a} -> {b}")
