"""`python -m evals.site`: the `build` command."""

import sys

from evals.site import main

if __name__ == "__main__":
    sys.exit(main())
