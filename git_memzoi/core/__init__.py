"""Shared by both surfaces: git view, scope globs, frontmatter IO, hashing, atomic writes, clock."""
