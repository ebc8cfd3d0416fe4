"""Private runtime memory: local records, session checkpoints and session-end promotion."""
