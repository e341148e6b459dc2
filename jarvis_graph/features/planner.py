"""The planner: a task split into steps that run as child runs (``graphs/planner``).

Its nodes make their own graph; as a feature of the run it declares the state it keeps
and the settings it reads. A child run is an ordinary run one level deeper
(``JarvisContext.depth``), composed with the same features.
"""

from __future__ import annotations

from jarvis_graph.features.base import Feature


class Planner(Feature):
    """Declares the planner's state keys and settings."""

    name = "planner"
    state_keys = ("plan", "plan_note", "step_results")
    settings = ("plan_max_depth", "plan_concurrency", "plan_adjust")
