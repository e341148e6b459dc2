"""Cited answers: each final answer is held to the lines of the results that hold it.

Small models end tasks with answers nothing supports: a number no tool returned, a plan
instead of an answer, "I fixed the file" when nothing was written. With the check on, a
task starts with the model's declaration of what it needs (``state_task``, :mod:`.cited`);
the answer is words; the ``review_answer`` node locates the result lines that hold each
value the answer states (:func:`jarvis_graph.citations.locate`) and runs the checks of
:mod:`.checks` on it. A problem goes back to the model (``answer_check_retries`` times);
a run that still has one ends ``unverified`` instead of ``completed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.features.answer_check import checks
from jarvis_graph.features.answer_check.cited import cited_tools
from jarvis_graph.features.answer_check.workspace import workspace_digest
from jarvis_graph.features.base import AnswerReview, Feature, Problem, RunSetup

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["AnswerCheck", "workspace_digest"]

LOCAL_PLATFORMS = frozenset({"local"})
"""Platforms whose models are small enough that ``answer_check: auto`` turns the check on."""


class AnswerCheck(Feature):
    """Cited answers: the ``state_task`` tool, and the review of every final answer."""

    name = "answer_check"
    state_keys = ("answer_problems", "review_problems", "workspace_digest")
    settings = ("answer_check", "answer_check_retries")

    def enabled(self, setup: RunSetup) -> bool:
        """``on``: always; ``auto``: for models of the local platform."""
        mode = setup.settings.answer_check
        if mode != "auto":
            return mode == "on"
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        return resolve_platform(setup.settings.model_for("normal")) in LOCAL_PLATFORMS

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """``state_task``, the declaration each task starts with."""
        return cited_tools()

    def reviews_answers(self, setup: RunSetup) -> bool:
        """Every final answer of the run is reviewed by :meth:`review_answer`."""
        return True

    def review_answer(self, setup: RunSetup, review: AnswerReview) -> list[Problem]:
        """The checks' problems with the answer (:func:`.checks.review`)."""
        return checks.review(review)
