"""Property tests of the editing engine (hypothesis)."""

from __future__ import annotations

import threading
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from jarvis_graph.editing import Edit, FilePatch, apply_edits, apply_patch, rewrite_file
from jarvis_graph.editing.matching import find_all
from jarvis_graph.editing.textfile import write_all

# No "\r": a file whose line endings are all CRLF is edited in LF form (tested apart).
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\0"),
    max_size=60,
)
LINES = st.lists(st.sampled_from(["a", "b", " a", "\tb", "x = 1", "", "é", "  "]), max_size=8).map(
    "\n".join
)
SOME = st.one_of(TEXT, LINES)
PROPS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@PROPS
@given(prefix=SOME, search=SOME.filter(bool), suffix=SOME, replace=SOME)
def test_a_unique_search_is_one_str_replace(
    prefix: str, search: str, suffix: str, replace: str
) -> None:
    content = prefix + search + suffix
    assume(len(find_all(content, search)) == 1)
    new, used = apply_edits(content, (Edit(search=search, replace=replace),), "f")
    assert new == content.replace(search, replace, 1)
    assert used == ["exact"]


@PROPS
@given(prefix=SOME, search=SOME.filter(bool), suffix=SOME, replace=SOME)
def test_a_unique_search_is_one_str_replace_on_disk(
    tmp_path: Path, prefix: str, search: str, suffix: str, replace: str
) -> None:
    content = prefix + search + suffix
    assume(len(find_all(content, search)) == 1)
    path = tmp_path / "f.txt"
    path.write_bytes(content.encode("utf-8"))
    outcome = apply_patch(
        [FilePatch("f.txt", (Edit(search=search, replace=replace),))], lambda _: path
    )
    assert outcome.ok, outcome.report()
    assert path.read_bytes() == content.replace(search, replace, 1).encode("utf-8")


@PROPS
@given(
    lines=st.lists(st.text(alphabet="abc xyz", max_size=8), min_size=1, max_size=8), data=st.data()
)
def test_crlf_files_stay_crlf(tmp_path: Path, lines: list[str], data: st.DataObject) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    text = "\n".join(lines) + "\n"
    start = data.draw(st.integers(0, len(text) - 1))
    search = text[start : data.draw(st.integers(start + 1, len(text)))]
    assume(len(find_all(text, search)) == 1)
    replace = data.draw(st.text(alphabet="pq\n", max_size=10))
    outcome = apply_patch(
        [FilePatch("w.txt", (Edit(search=search, replace=replace),))], lambda _: path
    )
    assert outcome.ok, outcome.report()
    raw = path.read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n")
    assert raw.replace(b"\r\n", b"\n") == text.replace(search, replace, 1).encode()


FILE_BYTES = st.one_of(
    st.binary(max_size=80),
    SOME.map(lambda t: t.encode("utf-8")),
    LINES.map(lambda t: t.replace("\n", "\r\n").encode("utf-8")),
)


@PROPS
@given(
    contents=st.lists(FILE_BYTES, min_size=1, max_size=4),
    searches=st.lists(st.tuples(SOME, SOME), min_size=1, max_size=4),
    broken=st.integers(0, 3),
)
def test_a_failed_call_leaves_every_file_byte_identical(
    tmp_path: Path, contents: list[bytes], searches: list[tuple[str, str]], broken: int
) -> None:
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    names = [f"f{i}.txt" for i in range(len(contents))]
    for name, data in zip(names, contents, strict=True):
        (folder / name).write_bytes(data)
    patches = [
        FilePatch(name, tuple(Edit(search=s, replace=r) for s, r in searches)) for name in names
    ]
    # One edit nobody's file can contain, so the call always fails somewhere.
    target = broken % len(names)
    patches[target] = FilePatch(
        names[target], (*patches[target].edits, Edit(search="\x07☃", replace=""))
    )
    outcome = apply_patch(patches, lambda name: folder / name)
    assert not outcome.ok
    for name, data in zip(names, contents, strict=True):
        assert (folder / name).read_bytes() == data
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


@PROPS
@given(contents=st.lists(st.binary(min_size=1, max_size=50), min_size=1, max_size=3))
def test_a_failed_write_puts_back_every_file(tmp_path: Path, contents: list[bytes]) -> None:
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    paths = [folder / f"f{i}" for i in range(len(contents))]
    for path, data in zip(paths, contents, strict=True):
        path.write_bytes(data)
    (folder / "blocker").mkdir()  # replacing a folder by a file fails
    changes = [(p, b"new " + d) for p, d in zip(paths, contents, strict=True)]
    changes += [(folder / "created" / "n.txt", b"n"), (folder / "blocker", b"x")]
    try:
        write_all(changes)
    except ValueError as exc:
        assert "no file was changed" in str(exc)
    else:
        raise AssertionError("writing over a folder should fail")
    for path, data in zip(paths, contents, strict=True):
        assert path.read_bytes() == data
    assert not (folder / "created").exists()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pieces=st.lists(
        st.text(alphabet="ab\n", min_size=1, max_size=8), min_size=2, max_size=6, unique=True
    ),
    size=st.integers(2_000, 30_000),
)
def test_no_partial_file_is_ever_visible(tmp_path: Path, pieces: list[str], size: int) -> None:
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    path = folder / "big.txt"
    versions = [
        f"<{i}>" + piece * (size // len(piece)) + f"</{i}>" for i, piece in enumerate(pieces)
    ]
    path.write_text(versions[0])
    seen: set[str] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(path.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i, text in enumerate(versions[1:], 1):
            if i % 2:  # REWRITE
                assert rewrite_file(path, "big.txt", text).ok
            else:  # PATCH replacing the whole text
                edit = Edit(search=versions[i - 1], replace=text)
                assert apply_patch([FilePatch("big.txt", (edit,))], lambda _: path).ok
    finally:
        done.set()
        reader.join()
    assert seen, "the reader never read"
    assert seen <= set(versions), "a reader saw a file that was neither the old nor the new one"
    assert path.read_text() == versions[-1]
