"""Images: `jarvis run --image` and `analyze_image`, against a chat-completions server."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFont

from tests.support.cli import run_process
from tests.support.fake_openai import FakeOpenAI, ToolCall
from tests.support.terminal import Terminal
from tests.support.trust import trust

KEY = "sk-test-images"


def _picture(path: Path, size: tuple[int, int], colour: str = "red", mode: str = "RGB") -> Path:
    Image.new(mode, size, colour).save(path)
    return path


def _run(
    server: FakeOpenAI, ws: Path, model: str, *args: str, ocr: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    if not ocr:  # a PATH without tesseract (Python's own folder only)
        env["PATH"] = str(Path(sys.executable).parent)
    cli = ["run", "-n", "--yes", "--platform", "openai", "--base-url", server.base_url]
    return subprocess.run(
        [sys.executable, "-m", "jarvis_graph.cli", *cli, "--model", model, *args],
        cwd=ws, env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip


def _image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def _decoded(part: dict[str, Any]) -> Image.Image:
    url = part["image_url"]["url"]
    head, data = url.split(",", 1)
    assert head in ("data:image/jpeg;base64", "data:image/png;base64")
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_an_image_goes_to_a_vision_model_as_a_scaled_down_part(workspace: Path) -> None:
    big = _picture(workspace / "wide.png", (3000, 1000))
    clear = _picture(workspace / "logo.png", (40, 40), (0, 0, 255, 0), mode="RGBA")
    with FakeOpenAI(models=("gpt-4o-mini",), api_key=KEY) as server:
        server.reply(text="A red rectangle and a transparent square. !!!COMPLETE!!!")
        done = _run(server, workspace, "gpt-4o-mini", "what is in these?", "--image", str(big),
                    "--image", "logo.png")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "A red rectangle" in done.stdout
    body = server.requests[0]
    user = next(m for m in body["messages"] if isinstance(m.get("content"), list))
    assert user["content"][0] == {"type": "text", "text": "what is in these?"}
    wide, logo = (_decoded(p) for p in _image_parts(body))
    assert wide.format == "JPEG" and wide.size == (1568, 523)  # image_max_side
    assert logo.format == "PNG" and logo.mode == "RGBA"  # transparency kept
    assert clear.is_file()


def test_the_system_prompt_comes_before_a_task_with_images(workspace: Path) -> None:
    """Chat templates want the system prompt first; the context follows its task as always."""
    _picture(workspace / "shot.png", (20, 20))
    (workspace / "notes.txt").write_text("the dialog appeared after the update\n")
    with FakeOpenAI(models=("gpt-4o-mini",), api_key=KEY) as server:
        server.reply(text="A red square. !!!COMPLETE!!!")
        done = _run(server, workspace, "gpt-4o-mini", "compare shot.png with notes.txt",
                    "--image", "shot.png", "--new-thread", "t-img")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        server.reply(text="Still red. !!!COMPLETE!!!")
        again = _run(server, workspace, "gpt-4o-mini", "and now?", "--image", "shot.png",
                     "--thread", "t-img")  # fmt: skip
        assert again.returncode == 0, again.stdout + again.stderr
    first, second = (body["messages"] for body in server.requests)
    assert [m["role"] for m in first] == ["system", "user", "user"]
    assert first[1]["content"][0] == {"type": "text", "text": "compare shot.png with notes.txt"}
    assert first[2]["name"] == "jarvis_context"
    assert "the dialog appeared after the update" in first[2]["content"]
    assert [m["role"] for m in second] == ["system", "user", "user", "assistant", "user", "user"]
    assert second[4]["content"][0] == {"type": "text", "text": "and now?"}
    assert second[5]["name"] == "jarvis_context"
    assert len(_image_parts({"messages": second})) == 2


def test_a_model_without_vision_is_refused_before_any_call(workspace: Path) -> None:
    _picture(workspace / "a.png", (10, 10))
    with FakeOpenAI(models=("text-only-model",), api_key=KEY) as server:
        done = _run(server, workspace, "text-only-model", "look", "--image", "a.png", ocr=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "the model openai:text-only-model does not take images (set `vision: true`" in done.stderr
    )
    assert server.requests == []


def test_vision_true_in_the_config_lets_any_model_take_images(workspace: Path) -> None:
    _picture(workspace / "a.png", (10, 10))
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(
        "model_groups:\n  default:\n    normal: {platform: openai, model: my-vlm, vision: true}\n"
    )
    trust(workspace)
    with FakeOpenAI(models=("my-vlm",), api_key=KEY) as server:
        server.reply(text="A red square. !!!COMPLETE!!!")
        done = _run(server, workspace, "my-vlm", "look", "--image", "a.png")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_image_parts(server.requests[0])) == 1


@pytest.mark.parametrize(
    ("name", "setup", "message"),
    [
        ("missing.png", None, "image {ws}/missing.png not found"),
        ("notes.png", "text", "is not an image that can be read"),
        ("big.png", "big", "more than the 2,000 allowed (image_max_bytes)"),
    ],
)
def test_bad_images_are_one_error_line(
    workspace: Path, name: str, setup: str | None, message: str
) -> None:
    if setup == "text":
        (workspace / name).write_text("not an image")
    if setup == "big":
        _picture(workspace / name, (400, 400), "white").write_bytes(os.urandom(5000))
        (workspace / ".jarvis").mkdir()
        (workspace / ".jarvis" / "config.yaml").write_text("image_max_bytes: 2000\n")
    with FakeOpenAI(models=("gpt-4o",), api_key=KEY) as server:
        done = _run(server, workspace, "gpt-4o", "look", "--image", name)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and message.format(ws=workspace) in done.stderr
    assert server.requests == []


def test_analyze_image_sends_a_workspace_image_with_the_question(workspace: Path) -> None:
    _picture(workspace / "chart.png", (200, 100), "green")
    with FakeOpenAI(models=("gpt-4o",), api_key=KEY) as server:
        server.reply(
            tool_calls=[
                ToolCall("analyze_image", {"path": "chart.png", "question": "What colour?"})
            ]
        )
        server.reply(text="It is green.")  # the tool's own call to the model
        server.reply(text="The chart is green. !!!COMPLETE!!!")
        done = _run(server, workspace, "gpt-4o", "what colour is chart.png?")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "analyze_image It is green." in done.stdout and "The chart is green." in done.stdout
    asked = server.requests[1]
    assert asked["messages"][0]["content"][0] == {"type": "text", "text": "What colour?"}
    assert _decoded(_image_parts(asked)[0]).size == (200, 100)
    assert "analyze_image" in json.dumps(server.requests[0]["tools"])


def test_analyze_image_is_offered_only_to_models_that_take_images(workspace: Path) -> None:
    listed = run_process(["tools", "list"], workspace)  # the default model: not a vision one
    assert "analyze_image" not in listed.stdout
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(
        "model_groups:\n  default:\n    normal: {platform: openai, model: gpt-4o}\n"
    )
    trust(workspace)
    listed = run_process(["tools", "list"], workspace)
    assert "analyze_image" in listed.stdout


def test_an_image_mentioned_in_chat_is_sent_as_an_image(workspace: Path) -> None:
    _picture(workspace / "pic.png", (64, 64), "yellow")
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text("chat_picker: false\n")
    with FakeOpenAI(models=("gpt-4o",), api_key=KEY) as server:
        server.reply(text="A yellow square. !!!COMPLETE!!!")
        args = ["chat", "--platform", "openai", "--base-url", server.base_url, "--model", "gpt-4o"]
        term = Terminal(args, workspace, {"OPENAI_API_KEY": KEY})
        term.expect("you> ")
        term.type("what is in @pic.png?")
        term.expect("A yellow square.")
        term.expect("you> ")
        term.type("/exit")
        assert term.exit_code() == 0
    user = next(m for m in server.requests[0]["messages"] if isinstance(m.get("content"), list))
    assert user["content"][0] == {"type": "text", "text": "what is in @pic.png?"}
    assert _decoded(_image_parts(server.requests[0])[0]).size == (64, 64)


def test_without_vision_the_text_in_an_image_is_read_by_tesseract(workspace: Path) -> None:
    assert shutil.which("tesseract"), (
        "tesseract is installed by .ci/run (apt-get install tesseract-ocr)"
    )
    picture = Image.new("RGB", (900, 160), "white")
    ImageDraw.Draw(picture).text((20, 40), "TOTAL 270.00 EUR", fill="black",
                                 font=ImageFont.load_default(size=64))  # fmt: skip
    picture.save(workspace / "receipt.png")
    with FakeOpenAI(models=("text-only-model",), api_key=KEY) as server:
        server.reply(text="The receipt total is 270.00 EUR. !!!COMPLETE!!!")
        done = _run(
            server, workspace, "text-only-model", "what is the total?", "--image", "receipt.png"
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "does not take images: sending the text tesseract read in them" in done.stdout
    task = server.requests[0]["messages"][1]["content"]
    assert "Text read from the image receipt.png by OCR (you cannot see the image):" in task
    assert "TOTAL 270.00 EUR" in task and _image_parts(server.requests[0]) == []


def test_the_embedded_model_behind_auto_never_gets_images(workspace: Path) -> None:
    # platform auto with no key is the local model, whatever model name the config gives
    _picture(workspace / "a.png", (10, 10))
    (workspace / ".jarvis").mkdir()
    (workspace / ".jarvis" / "config.yaml").write_text(
        "model_groups:\n  default:\n    normal: {platform: auto, model: gpt-4o-mini}\n"
    )
    trust(workspace)
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "jarvis_graph.cli", "run", "-n", "look", "--image", "a.png"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the model local:gpt-4o-mini does not take images" in done.stderr
    listed = run_process(["tools", "list"], workspace)
    assert "analyze_image" not in listed.stdout
