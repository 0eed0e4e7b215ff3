"""``python -m memoryapp_client``: the ``memoryapp`` command, without its console script."""

import sys

from memoryapp_client.cli import main

sys.exit(main())
