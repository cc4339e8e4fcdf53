"""``python -m runners.report``: see ``runners.report.cli``."""

import sys

from runners.report.cli import main

sys.exit(main())
