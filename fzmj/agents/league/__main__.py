"""``python -m fzmj.agents.league``: the ``fzmj-league`` command."""

import sys

from .cli import main

sys.exit(main())
