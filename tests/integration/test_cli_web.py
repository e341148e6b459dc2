"""`jarvis run` with the web tools: a SearxNG-shaped backend and a page on loopback."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_process, write_script
from tests.support.trust import trust
from tests.support.web_server import Reply, WebServer

PAGE = """<html><head><title>Pool sizing</title></head><body><nav>Home | Blog</nav><article>
<h1>Pool sizing</h1><p>The connection pool of release 7 holds at most 40 connections.</p>
</article></body></html>"""


def _config(workspace: Path, text: str) -> None:
    (workspace / ".jarvis").mkdir(exist_ok=True)
    (workspace / ".jarvis" / "config.yaml").write_text(text)
    trust(workspace)


def test_a_run_searches_reads_the_result_and_answers(workspace: Path, tmp_path: Path) -> None:
    with WebServer() as web:
        page_url = web.url("/pool")
        web.routes["/pool"] = Reply(PAGE)
        web.routes["/search"] = Reply.json(
            {"results": [{"url": page_url, "title": "Pool sizing", "content": "at most 40"}]}
        )
        _config(
            workspace,
            f"web:\n  search: searxng\n  url: {web.url()}\n  allow_hosts: ['127.0.0.1']\n",
        )
        script = write_script(
            tmp_path / "s.yaml",
            [
                {"tool_calls": [{"name": "search_web", "args": {"query": "pool size release 7"}}]},
                {"tool_calls": [{"name": "read_webpage", "args": {"url": page_url}}]},
                {"text": f"At most 40 connections ({page_url}). !!!COMPLETE!!!"},
            ],
        )
        done = run_process(
            ["run", "pool size?", "-n", "--yes", "--platform", "scripted", "--script", str(script)],
            cwd=workspace,
        )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "1 result for 'pool size release 7':" in out
    assert "# Pool sizing" in out and "holds at most 40 connections" in out
    assert "Home | Blog" not in out  # the page's menu is not its text
    assert "■ completed ·" in out
    assert [r.path for r in web.requests] == ["/search", "/pool"]


def test_a_run_refuses_a_private_page_and_goes_on(workspace: Path, tmp_path: Path) -> None:
    with WebServer({"/admin": Reply(PAGE)}) as web:
        _config(workspace, "web: {read_pages: true}\n")
        script = write_script(
            tmp_path / "s.yaml",
            [
                {"tool_calls": [{"name": "read_webpage", "args": {"url": web.url("/admin")}}]},
                {"text": "The page could not be read. !!!COMPLETE!!!"},
            ],
        )
        done = run_process(
            ["run", "read it", "-n", "--yes", "--platform", "scripted", "--script", str(script)],
            cwd=workspace,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "127.0.0.1 resolves to 127.0.0.1, a loopback, private or reserved address" in done.stdout
    assert web.requests == []


def test_without_a_backend_the_model_is_told_how_to_turn_web_tools_on(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"tool_calls": [{"name": "search_web", "args": {"query": "x"}}]},
            {"text": "No web search here. !!!COMPLETE!!!"},
        ],
    )
    done = run_process(
        ["run", "search", "-n", "--platform", "scripted", "--script", str(script)], cwd=workspace
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "search_web is not available in this run: web tools are off; set" in done.stdout
    listed = run_process(["tools", "list"], cwd=workspace)
    assert "off: search_web, read_webpage: web tools are off; set `web.search`" in listed.stdout
