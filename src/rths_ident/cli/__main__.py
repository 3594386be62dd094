"""``python -m rths_ident.cli …`` is ``rths-ident …`` (servers started as child processes use it)."""

import sys

from rths_ident.cli import main

sys.exit(main())
