"""Where the toolkit meets other programs: Claude Code hook envelopes, git hooks, CI reporters, MCP."""
