"""The output sink of execute_script: head and tail kept, the whole on disk, secrets masked."""

from __future__ import annotations

from pathlib import Path

from jarvis_graph.tools.script_output import OutputSink, StreamMasker


def _sink(tmp_path: Path, limit: int = 300, secrets: tuple[str, ...] = ()) -> OutputSink:
    return OutputSink(list(secrets), limit, tmp_path / "outputs", "execute_script")


def test_a_short_output_is_kept_whole_and_leaves_no_file(tmp_path: Path) -> None:
    sink = _sink(tmp_path)
    for part in (b"one\n", b"two\n"):
        sink.feed(part)
    done = sink.finish()
    assert (done.head, done.tail, done.chars, done.path) == ("one\ntwo\n", "", 8, None)
    assert not (tmp_path / "outputs").exists()


def test_a_long_output_keeps_head_and_tail_and_writes_the_whole(tmp_path: Path) -> None:
    text = "".join(f"line {n}\n" for n in range(1000))
    sink = _sink(tmp_path)
    for start in range(0, len(text), 97):  # reads of an odd size
        sink.feed(text[start : start + 97].encode())
    done = sink.finish()
    assert done.path is not None and done.path.read_text() == text
    assert done.head == text[:200] and done.tail == text[-100:]
    assert done.chars == len(text)
    assert [p.name for p in done.path.parent.iterdir()] == [done.path.name]  # no partial file
    assert done.path.name.startswith(tuple("0123456789")) and "-execute_script-" in done.path.name


def test_a_character_split_between_reads_is_decoded_once(tmp_path: Path) -> None:
    sink = _sink(tmp_path)
    data = "é€😀".encode()
    for byte in data:
        sink.feed(bytes([byte]))
    assert sink.finish().head == "é€😀"


def test_secrets_are_masked_in_head_tail_and_file(tmp_path: Path) -> None:
    secret = "tok-4242-secret"
    text = "".join(f"{n} {secret}\n" for n in range(200))
    sink = _sink(tmp_path, secrets=(secret,))
    for start in range(0, len(text), 5):
        sink.feed(text[start : start + 5].encode())
    done = sink.finish()
    assert done.path is not None
    whole = done.path.read_text()
    assert secret not in whole + done.head + done.tail
    assert whole == text.replace(secret, "***")


def test_a_discarded_output_leaves_no_file(tmp_path: Path) -> None:
    sink = _sink(tmp_path)
    sink.feed(b"x" * 1000)
    sink.discard()
    assert list((tmp_path / "outputs").iterdir()) == []


def test_without_secrets_the_masker_passes_text_through() -> None:
    masker = StreamMasker([])
    assert masker.feed("abc") == "abc" and masker.flush() == ""
