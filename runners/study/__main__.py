"""``python -m runners.study STUDY.toml``."""

import sys

from runners.study.cli import main

sys.exit(main())
