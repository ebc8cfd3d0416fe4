"""git-memzoi: governed, staleness-aware project memory kept inside the git repository."""

__version__ = "0.1.0"
