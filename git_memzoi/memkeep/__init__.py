"""The Earned Memory model (memkeep): entries, store discovery, the staleness fixpoint, lint, verify, index."""
