"""``python -m runners.report``: see ``runners.report.cli``."""

import sys

from .cli import main

sys.exit(main())
