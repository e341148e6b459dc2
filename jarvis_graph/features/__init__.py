"""Features: each module declares what it adds to a run (see :mod:`.base`)."""
