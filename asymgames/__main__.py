"""``python -m asymgames``: the same as the ``asymgames`` command."""

import sys

from .cli import main

sys.exit(main())
