"""C/C++ rules on small fixtures: each unsafe function is flagged, its safe twin is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_graph.security import scan_path
from jarvis_graph.security.c_scan import scan_c_text

FIXTURES = Path(__file__).parents[2] / "fixtures" / "security" / "c"


@pytest.fixture(scope="module")
def by_function() -> dict[str, set[str]]:
    result = scan_path(FIXTURES, ("c", "cpp"), workers=1)
    found: dict[str, set[str]] = {}
    for issue in result.issues:
        found.setdefault(issue.function, set()).add(issue.pattern)
    return found


@pytest.mark.parametrize(
    ("function", "rule"),
    [
        ("copy_too_much", "c-copy-overflow"),
        ("loop_past_end", "c-copy-overflow"),
        ("index_from_input", "c-index-unchecked"),
        ("twice", "c-double-free"),
        ("use_after", "c-use-after-free"),
        ("stack_free", "c-free-nonheap"),
        ("null_deref", "c-null-deref"),
        ("early_return_leak", "c-leak"),
        ("uninit", "c-uninitialized"),
        ("wrong_release", "c-mismatched-free"),
        ("log_user", "c-format-nonliteral"),
        ("run_user", "c-command-injection"),
        ("grow", "c-int-overflow"),
        ("ignore_read", "c-unchecked-return"),
        ("read_line", "c-gets"),
    ],
)
def test_unsafe_function_is_flagged(by_function: dict[str, set[str]], function: str, rule: str):
    assert rule in by_function.get(function, set())


@pytest.mark.parametrize(
    "function",
    [
        "copy_fits", "index_checked", "once", "null_checked", "init", "right_release",
        "log_user_safely", "run_fixed", "check_read",
    ],
)  # fmt: skip
def test_safe_twin_is_not_flagged(by_function: dict[str, set[str]], function: str):
    assert function not in by_function


def test_same_api_with_safe_sizes_is_not_flagged():
    code = """
void f(void)
{
    char dst[100];
    char src[50] = "hello";
    strcpy(dst, src);
}
void g(void)
{
    char dst[10];
    char src[50] = "this text is longer than ten";
    strcpy(dst, src);
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.pattern) for i in issues] == [("g", "c-copy-overflow")]


def test_callee_is_judged_with_what_the_caller_passes():
    code = """
static void sink(char *data)
{
    printf(data);
}
void from_input(void)
{
    char buf[64] = "";
    if (fgets(buf, 64, stdin) == NULL) return;
    sink(buf);
}
void from_literal(void)
{
    char buf[64] = "";
    strcpy(buf, "fixed");
    sink(buf);
}
"""
    confident = [i for i in scan_c_text(code, "x.c") if i.confidence >= 0.5]
    assert [(i.function, i.pattern) for i in confident] == [("sink", "c-format-nonliteral")]


def test_comments_and_strings_do_not_confuse_the_model():
    code = """
/* free(p); } { */
void f(void)
{
    const char *s = "free(p); }";
    char *p = (char *)malloc(4);
    if (p == NULL) return;
    // free(p);
    free(p);
}
"""
    assert [i.pattern for i in scan_c_text(code, "x.c") if i.confidence >= 0.4] == []


def test_unbalanced_conditional_branches_do_not_merge_functions():
    code = """
int first(int use_fast)
{
#if defined(FAST)
    if (use_fast) {
#else
    {
#endif
        return 1;
    }
    return 0;
}
void second(void)
{
    char *p = (char *)malloc(4);
    free(p);
    free(p);
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.pattern) for i in issues] == [("second", "c-double-free")]


def test_if_zero_branch_is_dropped_and_balanced_branches_are_kept():
    code = """
void f(void)
{
    char *p = (char *)malloc(4);
#if 0
    free(p);
#endif
    free(p);
}
void g(void)
{
    char *p = (char *)malloc(4);
#ifdef A
    free(p);
#else
    (void)0;
#endif
    free(p);
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.line, i.pattern) for i in issues] == [("g", 18, "c-double-free")]


def test_freeing_members_is_not_freeing_the_struct():
    code = """
struct ctx { char *a; char *b; };
static void destroy(struct ctx *c)
{
    free(c->a);
    c->a = NULL;
    free(c->b);
    free(c);
}
void twice(struct ctx *c)
{
    free(c);
    free(c);
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.pattern) for i in issues] == [("twice", "c-double-free")]


def test_mask_keeps_literals_at_the_start_and_their_prefixes():
    from jarvis_graph.security.c_source import mask

    masked, literals = mask('"at start" L"wide" u8"narrow" /* a ** b */ x // c\n\'\\n\'')
    assert masked == " __S0__  __S1__  __S2__   x  \n 10 "
    assert [(lit.text, lit.wide) for lit in literals] == [
        ("at start", False), ("wide", True), ("narrow", False),
    ]  # fmt: skip


def test_what_an_error_return_block_frees_does_not_reach_past_it():
    code = """
int build(int n)
{
    char *a = (char *)malloc(8);
    char *b = (char *)malloc(8);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    memset(a, 0, 8);
    free(a);
    free(b);
    return 0;
}
void twice(void)
{
    char *a = (char *)malloc(8);
    if (a != NULL) {
        free(a);
    }
    free(a);
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.pattern) for i in issues if i.confidence >= 0.5] == [
        ("twice", "c-double-free"),
    ]  # fmt: skip


def test_statements_after_case_and_goto_labels_are_read():
    code = """
void by_case(int k)
{
    char *p = (char *)malloc(4);
    switch (k) {
    case 6: free(p); break;
    default: break;
    }
    free(p);
}
void labelled(unsigned rep[3], unsigned a)
{
    if (a) goto done;
    a = 1;
done: rep[1] = a;
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.pattern) for i in issues if i.confidence >= 0.5] == [
        ("by_case", "c-double-free"),
    ]  # fmt: skip


def test_assignments_inside_conditions_and_comma_lists_set_the_variable():
    code = """
int next(int *first, int *last);
void walk(int *first, int *last)
{
    int *i, *j;
    int t;
    int r;
    for (i = last - 2, j = i + 1; 0 < (r = next(first, j));) {
        t = *j + r;
        first[0] = t;
    }
}
void unset(void)
{
    int r;
    int t = r + 1;
    printf("%d", t);
}
"""
    issues = scan_c_text(code, "x.c")
    assert [(i.function, i.pattern) for i in issues if i.confidence >= 0.5] == [
        ("unset", "c-uninitialized"),
    ]  # fmt: skip


def test_directives_are_read_on_the_first_line_and_after_indentation():
    from jarvis_graph.security.c_source import parse_c

    src = parse_c(
        '#define SIZE 4\n  #  define NAME "x"\nint f(void) { return SIZE; }\n#if 0\n#endif\n'
    )
    assert src.macros == {"SIZE": "4", "NAME": "__S0__"}
    assert [(fn.name, fn.start_line) for fn in src.functions] == [("f", 3)]
    assert "#" not in src.masked  # directive lines are blanked, the line count is kept
    assert src.masked.count("\n") == 5


def test_quotes_inside_literals_do_not_start_comments_or_strings():
    from jarvis_graph.security.c_source import mask

    masked, literals = mask("a = '\"'; b = '/'; s = \"/* x */\"; /* ' \" */ c = '\\'';")
    assert masked == "a =  34 ; b =  47 ; s =  __S0__;   c =  39 ;"
    assert [lit.text for lit in literals] == ["/* x */"]


def test_realloc_into_the_pointer_it_resizes_leaks_when_it_fails():
    code = """
struct s { char *buf; };
void local(size_t n) { char *p = malloc(10); if (!p) return; p = (char *)realloc(p, n); free(p); }
void member(struct s *o, size_t n) { o->buf = realloc( o->buf , n); }
void from_null(size_t n) { char *p = NULL; p = realloc(p, n); free(p); }
void temporary(size_t n) {
    char *p = malloc(10); char *t;
    if (!p) return;
    t = realloc(p, n);
    if (t) p = t;
    free(p);
}
"""
    found = [(i.function, i.confidence) for i in scan_c_text(code, "x.c")
             if i.pattern == "c-realloc-leak"]  # fmt: skip
    # memory this function allocated is lost for sure; a member may be NULL (then realloc
    # only allocates): a maybe, under the default threshold
    assert found == [("local", 0.6), ("member", 0.35)]
