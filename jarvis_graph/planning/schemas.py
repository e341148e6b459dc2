"""Structured outputs the planner asks the model for (pydantic, so any chat model can fill them)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class PlannedStep(BaseModel):
    """One sub-task of a plan, run by a child agent."""

    id: str = Field(description="Short unique id, e.g. 'step_1'.")
    task: str = Field(description="What the child agent must do; self-contained.")
    depends_on: list[str] = Field(
        default_factory=list, description="Ids of steps whose results this step needs."
    )


class PlanDecision(BaseModel):
    """Whether to split the task into sub-tasks, and the sub-tasks."""

    split: bool = Field(description="True to split the task into steps; false to do it directly.")
    reason: str = Field(default="", description="Why (one sentence).")
    steps: list[PlannedStep] = Field(default_factory=list, description="The steps when split.")


class PlanAdjustment(BaseModel):
    """Changes to the steps of a plan that have not run yet."""

    change: bool = Field(description="True to replace the remaining steps with `steps`.")
    reason: str = Field(default="", description="Why (one sentence).")
    steps: list[PlannedStep] = Field(default_factory=list, description="The new remaining steps.")
