"""Multi-agent configuration (agents YAML) and the hand-off tool."""
