"""The package's version, its single source: ``fzmj_env.__version__``, ``fzmj.__version__``, every
command's ``--version``, the wheel's metadata (pyproject.toml reads it: ``[tool.setuptools.dynamic]``),
CHANGELOG.md's newest release and CITATION.cff say the same (tests/test_version.py)."""

__version__ = "0.1.0"
