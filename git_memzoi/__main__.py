"""`python -m git_memzoi` runs the `git memzoi` command line."""

from git_memzoi.cli.memzoi import main

if __name__ == "__main__":
    main()
