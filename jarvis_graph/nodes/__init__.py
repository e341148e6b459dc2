"""Node functions of the Jarvis graphs: ``(state, runtime) -> partial update | Command``."""
