"""The confirm prompt's rendering: short calls whole, long arguments as head, count and tail."""

from __future__ import annotations

from jarvis_graph.cli.approval import show_request, show_whole_request


def request(args: dict[str, object], **extra: object) -> dict[str, object]:
    return {"id": "c1", "name": "execute_script", "args": args, "kind": "confirm", **extra}


def test_a_call_that_fits_is_one_line_with_nothing_hidden() -> None:
    shown = show_request(request({"script": "ls -la"}))
    assert shown.lines == ['confirm execute_script {"script": "ls -la"}']
    assert shown.hidden == 0


def test_a_long_script_shows_its_head_its_last_lines_and_the_exact_hidden_count() -> None:
    script = "\n".join(f"echo step {n}" for n in range(1000)) + "\nrm -rf ./important"
    shown = show_request(request({"script": script, "timeout": 5}))
    text = "\n".join(shown.lines)
    assert text.startswith("confirm execute_script\n")
    assert "    echo step 0" in text and "    rm -rf ./important" in text
    assert "  timeout: 5" in text
    head = [line for line in shown.lines if line.startswith("    echo step")]
    shown_chars = sum(len(line) - 4 for line in head) + len("rm -rf ./important")
    newlines = len(head)  # the line breaks of the shown lines, the one before rm included
    assert shown.hidden == len(script) - shown_chars - newlines
    assert f"… {shown.hidden:,} more characters" in text and "press v to view all" in text


def test_one_huge_line_shows_its_start_and_end() -> None:
    script = "echo " + "a" * 20_000 + "; rm -rf ./important"
    text = "\n".join(show_request(request({"script": script})).lines)
    assert text.rstrip().endswith("rm -rf ./important")
    assert "(1 line) hidden" in text


def test_targets_are_whole_and_control_characters_are_escaped() -> None:
    path = "docs/" + "x" * 500 + ".md"
    args = {"path": path, "content": "\x1b]52;c;aGk=\x07" + "y" * 600 + "\u202e"}
    shown = show_request(request(args, name="write_file", targets=[path]))
    text = "\n".join(shown.lines)
    assert f"  writes: {path}" in text
    assert "\\x1b]52;c;aGk=\\x07" in text and "\\u202e" in text
    assert "\x1b" not in text and "\u202e" not in text
    whole = "\n".join(show_whole_request(request(args, name="write_file")))
    assert "y" * 600 in whole and "\x1b" not in whole
