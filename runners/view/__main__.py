"""``python -m runners.view RUN_DIR``: see ``runners.view.cli``."""

import sys

from runners.view.cli import main

if __name__ == "__main__":
    sys.exit(main())
