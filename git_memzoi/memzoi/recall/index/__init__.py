"""The derived SQLite FTS5 index of records: schema and queries, row building, and the file watcher."""
