"""Readable functions: outside the Numba kernels, a function over 80 lines says why it is long.

The reason is a comment at the top of its body (after the docstring) that uses the word "long",
e.g. ``# Long on purpose: the table of every plane ...``. Numba kernels are exempt: their length
is set by the rule they implement and by what Numba can inline.
"""

from __future__ import annotations

import ast

from import_graph import module_files

MAX_LINES = 80


def _is_kernel(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _says_why(fn: ast.FunctionDef, lines: list[str]) -> bool:
    """A comment mentioning "long" between the def line and the first statement after the docstring."""
    body = fn.body
    first = (
        body[1]
        if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        else body[0]
    )
    head = lines[fn.lineno : first.lineno - 1]
    return any(line.strip().startswith("#") and "long" in line.lower() for line in head)


def long_functions_without_a_reason() -> list[str]:
    out = []
    for name, path in module_files().items():
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_kernel(node):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES and not _says_why(node, lines):
                    out.append(f"{path}:{node.lineno}: {name}.{node.name} is {n} lines")
    return out


def test_long_functions_say_why():
    assert long_functions_without_a_reason() == []


def test_the_check_sees_a_long_function(tmp_path, monkeypatch):
    import test_function_length as me

    f = tmp_path / "m.py"
    f.write_text("def f():\n" + "    x = 1\n" * 90 + "\n\ndef g():\n    # long: a table\n" + "    y = 2\n" * 90)
    monkeypatch.setattr(me, "module_files", lambda: {"m": f})
    assert [line.split(": ", 1)[1] for line in me.long_functions_without_a_reason()] == ["m.f is 91 lines"]
