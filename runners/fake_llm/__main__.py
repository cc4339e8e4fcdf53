"""``python -m runners.fake_llm``: run the local model server."""

import sys

from .cli import main

sys.exit(main())
