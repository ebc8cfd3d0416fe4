"""Capture: plans, review and apply, artifacts, sources, and the deterministic profiles (memzoi-spec.md §9)."""
