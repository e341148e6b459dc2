"""``run_task_graph`` inside the agent graph, over the real built-in tools."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from jarvis_graph.context import JarvisContext
from jarvis_graph.graphs.agent import build_agent_graph
from jarvis_graph.runtime.services import RunServices
from tests.support.fake_models import answer, call, use_fake

TASKS = [
    {"id": "files", "tool": "list_files", "args": {"pattern": "*.txt"}},
    {"id": "a", "tool": "read_code", "args": {"path": "a.txt"}},
    {"id": "gone", "tool": "read_code", "args": {"path": "missing.txt"}},
    {"id": "save", "tool": "execute_script", "args": {"script": "echo '${gone.result}' > x"}},
    {"id": "count", "tool": "execute_script", "args": {"script": "echo '${a.result}' | wc -l"}},
]


def test_the_model_runs_a_tool_plan_in_one_call(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("task_graph_tool: true\n")

    def brain(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return answer("Done. !!!COMPLETE!!!")
        return call("run_task_graph", tasks=TASKS)

    use_fake(brain)
    ctx = JarvisContext(workspace=str(workspace), platform="fake", confirm="never")
    assert "run_task_graph" in RunServices(ctx).tools
    out = (
        build_agent_graph()
        .compile()
        .invoke({"task": "look around"}, context=ctx, config={"recursion_limit": 50})
    )
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    text = str(result.content)
    assert "[files] list_files: succeeded\n1 file under .:\na.txt" in text
    assert "[a] read_code: succeeded" in text and "alpha" in text
    assert "[gone] read_code: failed" in text
    assert "[save] execute_script: skipped\nnot run: it depends on 'gone', which failed" in text
    assert "[count] execute_script: succeeded\nexit code: 0\n3" in text  # two lines + newline
    assert not (workspace / "x").exists()


def test_the_tool_is_off_by_default(workspace: Path) -> None:
    assert "run_task_graph" not in RunServices(JarvisContext(workspace=str(workspace))).tools
