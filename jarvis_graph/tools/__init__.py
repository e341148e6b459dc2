"""Tools the agent can call: the tool base, built-ins, user tool files and MCP servers.

The registry that puts a run's tools together is :mod:`jarvis_graph.runtime.registry`: it
sits above the features whose tools it gathers, so this package imports none of them.
"""
