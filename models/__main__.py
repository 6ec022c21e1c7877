"""``python -m models`` runs the ``smp-contention`` command line."""

import sys

from models.cli import main

sys.exit(main())
