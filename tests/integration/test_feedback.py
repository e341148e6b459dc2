"""Learning from feedback, end to end with the scripted platform and the real memory store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_process, write_script
from tests.support.fake_openai import FAKE_KEY, FakeOpenAI
from tests.support.terminal import Terminal

LESSON = "Run python -m pytest after editing and report the result; never answer before it passes."


def _run(workspace: Path, script: Path, task: str, *extra: str) -> str:
    args = ["run", task, "-n", "--platform", "scripted", "--script", str(script), *extra]
    done = run_process(args, workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_bad_rating_teaches_similar_tasks_and_not_unrelated_ones(
    workspace: Path, tmp_path: Path
) -> None:
    answers = write_script(
        tmp_path / "run.yaml",
        [
            {"when": "Lessons from earlier tasks", "text": "LESSON SEEN !!!COMPLETE!!!"},
            {"text": "NO LESSON !!!COMPLETE!!!"},
        ],
    )  # fmt: skip
    assert "NO LESSON" in _run(workspace, answers, "fix the failing test in parser.py",
                               "--new-thread", "task-a")  # fmt: skip
    review = {"kind": "fix tests", "lesson": LESSON}
    critic = write_script(
        tmp_path / "critic.yaml", [{"tool_calls": [{"name": "TaskReview", "args": review}]}]
    )
    args = ["feedback", "task-a", "--rating", "1", "--comment", "you never ran the tests"]
    done = run_process([*args, "--platform", "scripted", "--script", str(critic)], workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "rated task-a 1/5; lesson saved (" in done.stdout
        and "tags: lesson, fix tests" in done.stdout
    )
    assert LESSON in done.stdout
    assert "LESSON SEEN" in _run(workspace, answers, "the tests in test_lexer.py fail, fix them")
    assert "NO LESSON" in _run(workspace, answers, "write the release notes for version 2.0")
    listed = run_process(["memory", "list", "--tag", "lesson"], workspace)
    assert "Lesson from the task 'fix the failing test in parser.py'" in listed.stdout


def test_a_good_rating_keeps_the_tools_that_worked(workspace: Path, tmp_path: Path) -> None:
    steps = write_script(
        tmp_path / "run.yaml",
        [
            {"tool_calls": [{"name": "list_files", "args": {}}]},
            {"tool_calls": [{"name": "read_code", "args": {"path": "notes.txt"}}]},
            {"text": "notes.txt has 1 line. !!!COMPLETE!!!"},
        ],
    )
    (workspace / "notes.txt").write_text("hello\n")
    _run(workspace, steps, "count the lines of notes.txt", "--new-thread", "task-g")
    review = {"kind": "count lines", "lesson": "List the files, then read the one named."}
    critic = write_script(
        tmp_path / "critic.yaml", [{"tool_calls": [{"name": "TaskReview", "args": review}]}]
    )
    args = [
        "feedback",
        "task-g",
        "--rating",
        "5",
        "--platform",
        "scripted",
        "--script",
        str(critic),
    ]
    done = run_process(args, workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pattern saved" in done.stdout and "tags: pattern, count lines" in done.stdout
    assert "Tools used, in order: list_files, read_code." in done.stdout


def test_ratings_outside_one_to_five_and_unknown_sessions_are_refused(workspace: Path) -> None:
    done = run_process(["feedback", "nope", "--rating", "6"], workspace)
    assert done.returncode == 2 and "Input should be less than or equal to 5" in done.stderr
    done = run_process(["feedback", "nope", "--rating", "2", "--platform", "scripted"], workspace)
    assert done.returncode == 1 and "nope" in done.stdout


def test_a_stated_preference_is_kept_for_later_runs_and_can_be_removed(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "run.yaml",
        [
            {"when": "User preferences", "text": "PREFERENCE SEEN !!!COMPLETE!!!"},
            {"text": "plain !!!COMPLETE!!!"},
        ],
    )
    _run(workspace, script, "Use pytest, not unittest. Then list the test files.")
    assert "PREFERENCE SEEN" in _run(workspace, script, "add a test for the parser")
    listed = run_process(["memory", "list", "--tag", "preference"], workspace)
    assert "Use pytest, not unittest" in listed.stdout
    cleared = run_process(["memory", "clear", "--tag", "preference", "--yes"], workspace)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert "plain" in _run(workspace, script, "add a test for the lexer")


def test_good_and_bad_in_chat_rate_the_session(workspace: Path, tmp_path: Path) -> None:
    review = {"kind": "greeting", "lesson": "Answer the greeting in one short line."}
    critic = {"tool_calls": [{"name": "TaskReview", "args": review}]}
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"when": "rated this task of an AI agent", **critic},
            {"text": "Hello there, how can I help you today? !!!COMPLETE!!!"},
        ],
    )
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("chat_picker: false\n")
    term = Terminal(["chat", "--platform", "scripted", "--script", str(script)], workspace)
    term.expect("you> ")
    term.type("/bad")
    term.expect("nothing to rate yet in this session")
    term.type("hi")
    term.expect("Hello there")
    term.expect("you> ")
    term.type("/bad too long for a greeting")
    term.expect("1/5; lesson saved (")
    term.expect("Answer the greeting in one short line.")
    term.type("/exit")
    assert term.exit_code() == 0


def _rate_on(server: FakeOpenAI, workspace: Path, *args: str) -> tuple[str, str]:
    """``jarvis feedback`` with the openai platform on ``server``: stdout and stderr."""
    model = ["--platform", "openai", "--model", "fake-model", "--base-url", server.base_url]
    done = run_process(["feedback", *args, *model], workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, done.stderr


@pytest.fixture
def rated_task(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A finished session ``task-a`` to rate, and the fake provider's key."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    script = write_script(tmp_path / "run.yaml", [{"text": "Done. !!!COMPLETE!!!"}])
    _run(workspace, script, "fix the failing test in parser.py", "--new-thread", "task-a")
    return "task-a"


def test_a_helper_model_that_gives_no_review_is_one_clear_line(
    workspace: Path, rated_task: str
) -> None:
    with FakeOpenAI(api_key=FAKE_KEY) as server:
        server.reply(text="Sorry, I cannot review that.")
        out, err = _rate_on(server, workspace, rated_task, "--rating", "2")
        server.reply(text='{"kind": "fix tests"}')
        with_comment, err2 = _rate_on(
            server, workspace, rated_task, "--rating", "1", "--comment", "run the tests first"
        )
    assert err == "" and err2 == ""
    assert out.splitlines() == [
        "rated task-a 2/5; no lesson was written: the cheap model gave no task review (its "
        "reply was not JSON: 'Sorry, I cannot review that.'). The rating is kept; rate the "
        "task again to retry."
    ]
    first = with_comment.splitlines()[0]
    assert first.startswith(
        "rated task-a 1/5; the cheap model gave no task review (its reply has no lesson), so "
        "your comment is the lesson ("
    )
    assert "The user said: run the tests first" in with_comment


def test_a_review_from_an_openai_model_saves_the_lesson_without_warnings(
    workspace: Path, rated_task: str
) -> None:
    review = {"kind": "fix tests", "lesson": LESSON}
    with FakeOpenAI(api_key=FAKE_KEY) as server:
        server.reply(text=json.dumps(review))
        out, err = _rate_on(server, workspace, rated_task, "--rating", "1")
        assert server.requests[-1]["response_format"]["json_schema"]["name"] == "TaskReview"
    assert err == ""  # no pydantic serializer warning
    assert "rated task-a 1/5; lesson saved (" in out and LESSON in out


def test_rating_a_task_again_replaces_its_lesson(
    workspace: Path, tmp_path: Path, rated_task: str
) -> None:
    old, new = "Read parser.py before editing it.", LESSON
    with FakeOpenAI(api_key=FAKE_KEY) as server:
        server.reply(text=json.dumps({"kind": "fix tests", "lesson": old}))
        _rate_on(server, workspace, rated_task, "--rating", "2")
        server.reply(text=json.dumps({"kind": "fix tests", "lesson": new}))
        _rate_on(server, workspace, rated_task, "--rating", "1", "--comment", "no tests run")
    listed = run_process(["memory", "list", "--tag", "lesson"], workspace).stdout
    assert new in listed and old not in listed
    answers = write_script(
        tmp_path / "later.yaml",
        [
            {"when": "Read parser.py before editing", "text": "OLD LESSON SEEN !!!COMPLETE!!!"},
            {"when": "Lessons from earlier tasks", "text": "NEW LESSON ONLY !!!COMPLETE!!!"},
            {"text": "NO LESSON !!!COMPLETE!!!"},
        ],
    )
    later = _run(workspace, answers, "the tests in test_lexer.py fail, fix them")
    assert "NEW LESSON ONLY" in later
    with FakeOpenAI(api_key=FAKE_KEY) as server:  # a middling rating keeps no lesson at all
        out, _ = _rate_on(server, workspace, rated_task, "--rating", "3")
    assert out.strip() == "rated task-a 3/5"
    assert LESSON not in run_process(["memory", "list", "--tag", "lesson"], workspace).stdout


def test_dash_m_gives_the_comment_not_the_model(workspace: Path, rated_task: str) -> None:
    with FakeOpenAI(api_key=FAKE_KEY) as server:
        server.reply(text=json.dumps({"kind": "fix tests", "lesson": LESSON}))
        out, _ = _rate_on(server, workspace, rated_task, "-r", "1", "-m", "you never ran them")
        sent = server.requests[-1]
    assert sent["model"] == "fake-model"
    assert "User's comment: you never ran them" in sent["messages"][-1]["content"]
    assert "lesson saved" in out
