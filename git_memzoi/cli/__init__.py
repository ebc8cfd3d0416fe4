"""The command lines: click groups that parse, call one core function and render its typed result."""
