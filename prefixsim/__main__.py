"""`python -m prefixsim`: the command line, as the `prefixsim` script runs it."""
from prefixsim.cli import main

if __name__ == "__main__":
    main()
