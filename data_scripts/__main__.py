"""``python -m data_scripts fetch|import|list`` (same as ``hbo-bench data ...``)."""

import sys

from data_scripts.cli import main

sys.exit(main())
