"""Tools the agent can call: the tool base, built-ins, user tool files and MCP servers.

A run's tools are put together by the features (:mod:`jarvis_graph.features`) and the run's
services (:mod:`jarvis_graph.runtime.services`); :mod:`.registry` holds the user and MCP
tools of a workspace, which outlive one run.
"""
