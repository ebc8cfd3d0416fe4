"""The deterministic capture profiles: markdown, instruction files, ADRs, git changes and diffs."""
