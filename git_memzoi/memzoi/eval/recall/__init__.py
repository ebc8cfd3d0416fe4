"""The recall eval: its corpus format, the record catalog it builds, and the run."""
