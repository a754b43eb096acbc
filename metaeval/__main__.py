import sys

from metaeval.cli import main

sys.exit(main())
