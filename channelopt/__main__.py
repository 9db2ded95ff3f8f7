"""`python -m channelopt ...` is the `channelopt` command."""

import sys

from .cli import main

sys.exit(main())
