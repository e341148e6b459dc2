"""The answer check: before a task completes, its answer is compared with the tools' evidence.

Small models end tasks with answers nothing supports: a number no tool returned, "I fixed
the file" when no tool wrote anything, a file said to be created that is not on disk. The
``check_answer`` node of the agent graph runs :func:`problems` on the final answer; a
failed check goes back to the model (``answer_check_retries`` times), and a run that
still fails ends with status ``unverified`` instead of ``completed``.

The rules are plain and general (no task wording is special; :mod:`.rules`):

- **Numbers**: every number of the answer must occur in the evidence (:mod:`.evidence`):
  the task and everything the user said on the thread, attached context, and every tool
  result (a failed one too: "the file does not exist" is evidence). The counts tools add
  about what they show (``lines 1-9 of 9``) support only an answer to a count; a count, a
  total or an extreme must come from something that counted or computed.
- **Actions**: a task that asks to run something needs a call of a tool that runs code
  (and a failed last run must be owned up to); one that asks to write, create, fix or
  change something needs a workspace file that changed since the task started;
  "remember" needs a memory save. Asked is an imperative clause ("Fix the typo, then run
  it", "Could you create ...").
- **Files**: a file the answer says it wrote, or a write clause names, must exist; a
  question about a file that is not there must say so; a "which file" answer must name a
  file holding the identifier the question quotes (:mod:`.workspace`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jarvis_graph.features.answer_check import checks
from jarvis_graph.features.answer_check.cited import cited_tools
from jarvis_graph.features.answer_check.evidence import Call, Evidence, evidence_of
from jarvis_graph.features.answer_check.rules import (
    action_problems,
    asked_actions,
    grounded,
    missing_file_problems,
    problems,
)
from jarvis_graph.features.answer_check.workspace import workspace_digest
from jarvis_graph.features.base import AnswerReview, Feature, Problem, RunSetup

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = [
    "action_problems",
    "AnswerCheck",
    "Call",
    "Evidence",
    "asked_actions",
    "evidence_of",
    "grounded",
    "missing_file_problems",
    "problems",
    "workspace_digest",
]

LOCAL_PLATFORMS = frozenset({"local"})
"""Platforms whose models are small enough that ``answer_check: auto`` turns the check on."""


class AnswerCheck(Feature):
    """Checks final answers: the ``check_answer`` node's rules, or cited answers.

    ``answer_check: cited``: the task is declared first and the answer cites its sources
    (the ``state_task`` and ``final_answer`` tools, :mod:`.cited`); the ``review_answer``
    node runs the checks of :mod:`.checks` on it. ``rules``/``auto``: the rules of
    :mod:`.rules`, in the ``check_answer`` node.
    """

    name = "answer_check"
    state_keys = ("answer_problems", "review_problems", "workspace_digest")
    settings = ("answer_check", "answer_check_retries")

    def enabled(self, setup: RunSetup) -> bool:
        """``rules``, ``cited``: always; ``auto``: for models of the local platform."""
        mode = setup.settings.answer_check
        if mode != "auto":
            return mode in ("rules", "cited")
        # deferred: resolving the platform reads the model spec only, no provider import
        from jarvis_graph.platforms.registry import resolve_platform

        return resolve_platform(setup.settings.model_for("normal")) in LOCAL_PLATFORMS

    def tools(self, setup: RunSetup) -> list[BaseTool]:
        """With cited answers: ``state_task`` and ``final_answer``."""
        return cited_tools() if self.reviews_answers(setup) else []

    def reviews_answers(self, setup: RunSetup) -> bool:
        """Cited answers are reviewed by :meth:`review_answer`."""
        return setup.settings.answer_check == "cited"

    def review_answer(self, setup: RunSetup, review: AnswerReview) -> list[Problem]:
        """The checks' problems with the answer (:func:`.checks.review`)."""
        return checks.review(review)
