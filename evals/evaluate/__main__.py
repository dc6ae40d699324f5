"""`python -m evals.evaluate`: the `evaluate` command."""

from evals.evaluate import main

if __name__ == "__main__":
    main()
