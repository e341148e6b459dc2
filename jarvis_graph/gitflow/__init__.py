"""The code agent's git workflow: repository set-up, diff previews, commits, statistics."""
