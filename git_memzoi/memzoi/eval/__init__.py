"""Trust evals: the shared run and report machinery, and the recall and capture evaluations."""
