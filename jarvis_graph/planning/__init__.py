"""Planning engines: plan checks and blocks, the tool-level task graph (no langgraph imports)."""
