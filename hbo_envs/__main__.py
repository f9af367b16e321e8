"""``python -m hbo_envs ...`` runs the ``hbo-bench`` command line (:func:`hbo_envs.cli.main`)."""

import sys

from hbo_envs.cli import main

if __name__ == "__main__":
    sys.exit(main())
