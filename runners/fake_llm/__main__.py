"""``python -m runners.fake_llm``: run the local model server."""

import sys

from runners.fake_llm.cli import main

sys.exit(main())
