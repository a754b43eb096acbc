"""``python -m benchmarks``: run every benchmark and print one table (see ``benchmarks.runner``)."""

import sys

from benchmarks.runner import main

sys.exit(main())
