"""Recall: the derived index, search, context packs, prechecks, suspect marks, budgets and path matching."""
