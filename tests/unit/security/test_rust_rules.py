"""Rust rules on the fixtures: every rule fires on the unsafe file, none on its safe twin."""

from __future__ import annotations

from pathlib import Path

from jarvis_graph.security.rules import RULES
from jarvis_graph.security.rust_rules import scan_rust_text

FIXTURES = Path(__file__).parents[2] / "fixtures" / "security" / "rust"


def _scan(name: str):
    return scan_rust_text((FIXTURES / name).read_text(encoding="utf-8"), name)


def test_every_rust_rule_fires_on_the_unsafe_fixture():
    found = {i.pattern for i in _scan("unsafe_bad.rs")}
    assert found == {r for r in RULES if r.startswith("rust-")}


def test_lines_point_at_the_code():
    by_rule = {i.pattern: i for i in _scan("unsafe_bad.rs")}
    assert "*ptr" in by_rule["rust-raw-deref"].evidence
    assert "from_raw_parts" in by_rule["rust-from-raw-parts"].evidence
    assert "c_close(fd);" in by_rule["rust-unchecked-extern"].evidence
    assert by_rule["rust-ffi-unwrap"].language == "rust"


def test_safe_fixture_has_no_reported_issue():
    reported = [i for i in _scan("unsafe_good.rs") if i.confidence >= 0.4]
    assert reported == []


def test_panic_inside_extern_c_fn_is_high_confidence():
    issues = [i for i in _scan("unsafe_bad.rs") if i.pattern == "rust-ffi-unwrap"]
    assert max(i.confidence for i in issues) == 0.8
    assert any(i.function == "parse_len" for i in issues)


def test_comments_and_strings_are_ignored():
    code = 'fn f() {\n    // unsafe { *p }\n    let s = "mem::forget(x) static mut";\n}\n'
    assert scan_rust_text(code, "x.rs") == []


def test_keywords_inside_longer_names_are_not_rules():
    code = (
        "fn my_unsafe() {}\n"
        "fn use_it(xs: &[u8]) -> usize {\n"
        "    let notunsafe = xs.len(); my_unsafe();\n"
        "    let dont_mem = myslice::from_raw_parts(xs);\n"
        "    notunsafe + dont_mem\n"
        "}\n"
        "fn real() { unsafe { core::hint::unreachable_unchecked() } }\n"
    )
    found = [(i.pattern, i.line) for i in scan_rust_text(code, "x.rs")]
    assert found == [("rust-unsafe-block", 7)]


def test_extern_c_is_read_before_fn_and_pub():
    code = 'pub extern "C" fn entry(p: *const u8) -> u8 {\n    parse(p).unwrap()\n}\n'
    issues = [i for i in scan_rust_text(code, "x.rs") if i.pattern == "rust-ffi-unwrap"]
    assert [(i.function, i.confidence) for i in issues] == [("entry", 0.8)]
