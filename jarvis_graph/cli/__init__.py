"""The ``jarvis`` command line. Heavy imports happen inside the commands that need them."""
