"""The capture eval: its corpus format, scoring, report and run."""
