"""Berkeley Function-Calling Leaderboard (BFCL) through the project's local platform.

Run with ``.venv/bin/python bench/bfcl.py`` (``--model 0.5b,1.5b`` or a GGUF path,
repeatable; ``--n 40`` cases per category; ``--seed 0``; ``--categories simple,irrelevance``;
``--multi-turn 10`` cases of ``multi_turn_base``, 0 to skip). ``--self-check`` runs no model.

Single-turn AST categories (simple, multiple, parallel, parallel_multiple, irrelevance) and a
smoke of the multi-turn base category. The data, its loaders, the conversion of BFCL function
docs to OpenAI tools (``convert_to_tool``, as BFCL's own OpenAI handler does), the AST checker
(``ast_checker``), the multi-turn executor and the multi-turn checker all come from the PyPI
package ``bfcl-eval``, used as they are; this file only carries the model's replies between
them. Each case is one ``create_chat_model(spec).bind_tools(tools).invoke(messages)`` of the
``local`` platform; the reply's ``tool_calls`` become BFCL's ``[{name: {arg: value}}]``
(dotted names such as ``math.factorial`` are underscored for the tool schema and mapped back).
An irrelevance case is right when no tool is called. A multi-turn case runs BFCL's inference
loop (tool results fed back, at most BFCL's step limit per turn) on BFCL's in-memory
backends (file system, trading, travel, ...), offline, then BFCL's multi-turn checker.

Subsets are drawn with ``random.Random(seed)`` per category. Per category: accuracy, n,
seconds per case, beside the published BFCL v3 FC-mode rows of Qwen2.5-0.5B/1.5B-Instruct.
Figures are printed and written to ``bench/results/bfcl.json``; exits 0.

``--self-check`` loads the same subsets, converts every function doc, and feeds each case's
first possible answer through the same conversion and checker (it must be accepted) and a
wrong one (it must be rejected); exits 1 when either fails.

bfcl-eval is installed by ``make`` with ``--no-deps``: its requirements pull torch and a
dozen vendor SDKs. The modules its loaders and checkers import are the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import random
import re
import sys
import time
import types
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "bfcl.json"
# bfcl-eval makes result/, score/ and lock folders under this root when imported.
BFCL_HOME = ROOT / ".cache" / "bfcl" / "project"
CHECKER_MODEL = "jarvis-graph"
# Our category names -> BFCL's (v4 files; the non-live single-turn data is v3's).
CATEGORIES = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
}
MULTI_TURN = "multi_turn_base"
# BFCL v3, FC mode, of the base models our GGUF files are quantized fine-tunes of.
PUBLISHED = {
    "Qwen2.5-0.5B": {
        "simple": 61.2,
        "multiple": 78.0,
        "parallel": 60.0,
        "parallel_multiple": 50.0,
        "irrelevance": 46.2,
    },
    "Qwen2.5-1.5B": {
        "simple": 72.4,
        "multiple": 87.0,
        "parallel": 81.5,
        "parallel_multiple": 75.5,
        "irrelevance": 62.7,
    },
}

if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))


@functools.cache
def bfcl() -> types.SimpleNamespace:
    """bfcl-eval's loaders, tool conversion, executor and checkers, imported once."""
    os.environ.setdefault("BFCL_PROJECT_ROOT", str(BFCL_HOME))
    # The AST checker reads one flag (underscore_to_dot) from bfcl-eval's registry of model
    # handlers, and importing that registry imports every vendor SDK it supports. This
    # stand-in holds the one model the checker is given here; names reach the checker with
    # their dots restored, so the flag is False (the checker compares names as they are).
    registry = types.ModuleType("bfcl_eval.constants.model_config")
    registry.MODEL_CONFIG_MAPPING = {CHECKER_MODEL: types.SimpleNamespace(underscore_to_dot=False)}
    sys.modules.setdefault(registry.__name__, registry)
    try:
        from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT
        from bfcl_eval.constants.enums import Language, ModelStyle
        from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (
            multi_turn_checker,
        )
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (
            execute_multi_turn_func_call,
        )
        from bfcl_eval.model_handler.utils import convert_to_function_call, convert_to_tool
        from bfcl_eval.utils import (
            is_empty_output,
            is_function_calling_format_output,
            load_dataset_entry,
            load_ground_truth_entry,
        )
    except ImportError as exc:
        msg = (
            f"bfcl-eval cannot be imported ({exc}): run `make` (it installs the bench extra "
            "and bfcl-eval with --no-deps), or see bench/README.md"
        )
        raise SystemExit(msg) from exc
    return types.SimpleNamespace(
        MAXIMUM_STEP_LIMIT=MAXIMUM_STEP_LIMIT,
        Language=Language,
        ModelStyle=ModelStyle,
        GORILLA_TO_OPENAPI=GORILLA_TO_OPENAPI,
        ast_checker=ast_checker,
        multi_turn_checker=multi_turn_checker,
        execute_multi_turn_func_call=execute_multi_turn_func_call,
        convert_to_function_call=convert_to_function_call,
        convert_to_tool=convert_to_tool,
        is_empty_output=is_empty_output,
        is_function_calling_format_output=is_function_calling_format_output,
        load_dataset_entry=load_dataset_entry,
        load_ground_truth_entry=load_ground_truth_entry,
    )


def bfcl_version() -> str:
    try:
        return version("bfcl-eval")
    except PackageNotFoundError:
        return "unknown"


def load_cases(category: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` cases of ``category`` (a BFCL name), drawn with ``seed``, in dataset order."""
    lib = bfcl()
    entries = lib.load_dataset_entry(category)
    # The checker sees the docs without the language hint, as BFCL's eval runner loads them.
    plain = {
        e["id"]: e
        for e in lib.load_dataset_entry(
            category, include_prereq=False, include_language_specific_hint=False
        )
    }
    truths: dict[str, Any] = {}
    if category != "irrelevance":  # no possible answers: no call is the answer
        truths = {a["id"]: a["ground_truth"] for a in lib.load_ground_truth_entry(category)}
    picked = sorted(random.Random(seed).sample(range(len(entries)), min(n, len(entries))))
    return [
        {
            "id": entries[i]["id"],
            "category": category,
            "entry": entries[i],
            "checker_functions": plain[entries[i]["id"]]["function"],
            "truth": truths.get(entries[i]["id"]),
        }
        for i in picked
    ]


def to_tools(functions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """OpenAI tool dicts made by BFCL's own converter, and tool name -> BFCL name."""
    lib = bfcl()
    tools = lib.convert_to_tool(
        functions, lib.GORILLA_TO_OPENAPI, lib.ModelStyle.OPENAI_COMPLETIONS
    )
    names = {t["function"]["name"]: f["name"] for t, f in zip(tools, functions, strict=True)}
    return tools, names


def parsed_calls(reply: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The reply's calls that parsed, and the errors of those that did not.

    The local platform hands an unparsable reply on as a call whose arguments are the raw
    text, with the reason under ``RAW_TOOL_CALLS``; the agent graph refuses such a call
    (``call_model``), and so does this harness: it is no call, not a call with odd arguments.
    """
    from jarvis_graph.platforms.arguments import RAW_TOOL_CALLS

    raw = reply.additional_kwargs.get(RAW_TOOL_CALLS) or []
    refused = {c.get("id"): str(c["error"]) for c in raw if isinstance(c, dict) and c.get("error")}
    good = [c for c in reply.tool_calls if c.get("id") not in refused]
    return good, list(refused.values())


def to_bfcl_output(tool_calls: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """``AIMessage.tool_calls`` -> BFCL's decoded model output ``[{name: {arg: value}}]``."""
    return [{names.get(c["name"], c["name"]): dict(c["args"])} for c in tool_calls]


def check(case: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
    """BFCL's verdict on one single-turn output (the steps of its eval runner, then its checker)."""
    lib = bfcl()
    if case["category"] == "irrelevance":
        if lib.is_empty_output(output):
            return {"valid": True}
        return {"valid": False, "error": ["a tool was called; none fits the question"]}
    if not lib.is_function_calling_format_output(output):
        return {"valid": False, "error": ["output is not [{name: {arg: value}}]"]}
    return lib.ast_checker(
        case["checker_functions"],
        output,
        case["truth"],
        lib.Language.PYTHON,
        case["category"],
        CHECKER_MODEL,
    )


def check_dialogue(
    case: dict[str, Any], turns: list[list[list[str]]], label: str
) -> dict[str, Any]:
    """BFCL's verdict on one multi-turn case: ``turns[turn][step]`` holds executed calls."""
    truth = case["truth"]
    if len(turns) != len(truth):  # BFCL's runner: stopped at the step limit before the end
        return {"valid": False, "error_type": "multi_turn:force_terminated"}
    decoded = [[step for step in turn if step] for turn in turns]
    return bfcl().multi_turn_checker(decoded, truth, case["entry"], MULTI_TURN, label)


# --- self-check: the dataset's own answers through the conversion and the checkers ---


def first_alternatives(params: dict[str, Any], required: Any = ()) -> dict[str, Any]:
    """One accepted value per parameter of a possible answer.

    ``""`` among the alternatives means the parameter may be left out: an optional one is;
    otherwise the first other alternative is taken (a few answers list ``""`` first for a
    parameter the doc requires, or give a nested field as a parameter).
    """
    args = {}
    for key, alternatives in params.items():
        if not isinstance(alternatives, list):
            alternatives = [alternatives]
        values = [v for v in alternatives if v != ""]
        if values and (key in required or len(values) == len(alternatives)):
            args[key] = _first_value(values[0])
    return args


def _first_value(value: Any) -> Any:
    # A dict's values are lists of alternatives again; a list is one value, item by item.
    if isinstance(value, dict):
        return first_alternatives(value)
    if isinstance(value, list):
        return [_first_value(v) for v in value]
    return value


def answer_as_tool_calls(
    truth: list[dict[str, Any]], functions: list[dict[str, Any]], names: dict[str, str]
) -> list[dict[str, Any]]:
    """A possible answer written as the ``tool_calls`` a model would return."""
    tool_name = {bfcl_name: name for name, bfcl_name in names.items()}
    required = {f["name"]: f["parameters"].get("required", []) for f in functions}
    calls = []
    for call in truth:
        ((name, params),) = call.items()
        args = first_alternatives(params, required.get(name, []))
        calls.append({"name": tool_name.get(name, name), "args": args})
    return calls


def self_check_case(case: dict[str, Any]) -> tuple[bool, bool]:
    """(the first possible answer is accepted, a wrong answer is rejected) for one case."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    tools, names = to_tools(case["entry"]["function"])
    for tool in tools:  # what bind_tools does with each tool: it must take BFCL's
        convert_to_openai_tool(tool)
    if case["category"] == MULTI_TURN:
        turns = [[calls] if calls else [] for calls in case["truth"]]
        label = re.sub(r"\W", "_", f"{CHECKER_MODEL}_self_check")
        right = check_dialogue(case, turns, label)
        # Wrong: the calls of the last turn that has any are left out.
        last = max(i for i, steps in enumerate(turns) if steps)
        wrong_turns = [[] if i == last else steps for i, steps in enumerate(turns)]
        wrong = check_dialogue(case, wrong_turns, f"{label}_wrong")
        return bool(right["valid"]), not wrong["valid"]
    if case["category"] == "irrelevance":
        right_calls: list[dict[str, Any]] = []
        wrong_calls = [{"name": tools[0]["function"]["name"], "args": {}}]
    else:
        right_calls = answer_as_tool_calls(case["truth"], case["checker_functions"], names)
        wrong_calls = [{**right_calls[0], "name": "no_such_function"}, *right_calls[1:]]
    right = check(case, to_bfcl_output(right_calls, names))
    wrong = check(case, to_bfcl_output(wrong_calls, names))
    return bool(right["valid"]), not wrong["valid"]


def plan(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    """(our name, BFCL's name, number of cases) of every category asked for."""
    rows = [(c, CATEGORIES[c], args.n) for c in args.categories]
    return rows + [(MULTI_TURN, MULTI_TURN, args.multi_turn)] * (args.multi_turn > 0)


def self_check(args: argparse.Namespace) -> int:
    """Run the self-check on the seeded subsets; 0 when every case passes both ways."""
    print(f"Self-check (no model): bfcl-eval {bfcl_version()}, seed {args.seed}")
    print(f"  {'category':<18}{'n':>4}  {'answer accepted':>16}  {'wrong rejected':>15}")
    failed = False
    for ours, theirs, count in plan(args):
        cases = load_cases(theirs, count, args.seed)
        verdicts = [self_check_case(case) for case in cases]
        accepted = [case["id"] for case, (ok, _) in zip(cases, verdicts, strict=True) if ok]
        rejected = sum(bad for _, bad in verdicts)
        failed |= len(accepted) < len(cases) or rejected < len(cases)
        print(
            f"  {ours:<18}{len(cases):>4}  {len(accepted):>10}/{len(cases):<5}"
            f"  {rejected:>9}/{len(cases):<5}"
        )
        missed = [case["id"] for case in cases if case["id"] not in accepted]
        if missed:
            print(f"    not accepted: {', '.join(missed[:10])}")
    print(
        "self-check: " + ("FAILED" if failed else "every answer accepted, every wrong one rejected")
    )
    return 1 if failed else 0


# --- model runs ---


def open_model(name: str, n_ctx: int) -> Any:
    """The local platform's chat model for ``name``, or None (said why) when it is missing."""
    from jarvis_graph.config import ModelSpec
    from jarvis_graph.platforms.errors import PlatformError
    from jarvis_graph.platforms.registry import create_chat_model

    try:
        return create_chat_model(ModelSpec(platform="local", model=name, n_ctx=n_ctx))
    except PlatformError as exc:
        print(f"model {name}: not measured: {exc}")
        return None


def run_case(chat: Any, case: dict[str, Any]) -> dict[str, Any]:
    """One single-turn case: one call of the platform, BFCL's verdict on its tool calls."""
    tools, names = to_tools(case["entry"]["function"])
    start = time.perf_counter()
    record: dict[str, Any] = {"id": case["id"]}
    try:
        reply = chat.bind_tools(tools).invoke(case["entry"]["question"][0])
        record["seconds"] = round(time.perf_counter() - start, 2)
        calls, refused = parsed_calls(reply)
        record["output"] = to_bfcl_output(calls, names)
        if refused:
            record["unparsed"] = refused
        if not calls:
            record["text"] = str(reply.content)[:300]
        verdict = check(case, record["output"])
    except Exception as exc:  # a failed call or check counts as wrong, with its reason
        record.setdefault("seconds", round(time.perf_counter() - start, 2))
        verdict = {"valid": False, "error": [f"{type(exc).__name__}: {exc}"]}
    record["valid"] = bool(verdict["valid"])
    if not record["valid"]:
        record["error"] = verdict.get("error")
    return record


def run_step(
    bound: Any, messages: list[Any], case: dict[str, Any], names: dict[str, str], label: str
) -> list[str] | None:
    """One model reply of a dialogue; its calls run on BFCL's backends (None: no call)."""
    from langchain_core.messages import ToolMessage

    lib, entry = bfcl(), case["entry"]
    reply = bound.invoke(messages)
    good, _ = parsed_calls(reply)
    calls = [{**c, "id": c.get("id") or f"call_{len(messages)}_{i}"} for i, c in enumerate(good)]
    messages.append(reply.model_copy(update={"tool_calls": calls}))
    if not calls:
        return None
    executed = []
    for call in calls:
        name = names.get(call["name"])
        # BFCL evaluates the call's text: only known names and plain argument names reach it.
        if name is None or not all(str(k).isidentifier() for k in call["args"]):
            result = f"Error during execution: no function {call['name']!r} with these arguments"
        else:
            [line] = lib.convert_to_function_call([{name: call["args"]}])
            [result], _ = lib.execute_multi_turn_func_call(
                [line], entry["initial_config"], entry["involved_classes"], label, entry["id"]
            )
            executed.append(line)
        messages.append(ToolMessage(content=str(result), tool_call_id=call["id"]))
    return executed


def run_dialogue(chat: Any, case: dict[str, Any], label: str) -> dict[str, Any]:
    """One multi-turn case through BFCL's inference loop, then BFCL's multi-turn checker."""
    tools, names = to_tools(case["entry"]["function"])
    bound = chat.bind_tools(tools)
    messages: list[Any] = []
    turns: list[list[list[str]]] = []
    start = time.perf_counter()
    record: dict[str, Any] = {"id": case["id"]}
    try:
        for turn in case["entry"]["question"]:
            messages.extend(turn)
            steps: list[list[str]] = []
            # BFCL's loop: until a reply without a call; past its step limit the case stops.
            while (step := run_step(bound, messages, case, names, label)) is not None:
                steps.append(step)
                if len(steps) > bfcl().MAXIMUM_STEP_LIMIT:
                    break
            turns.append(steps)
            if len(steps) > bfcl().MAXIMUM_STEP_LIMIT:
                break
        verdict = check_dialogue(case, turns, label)
    except Exception as exc:  # a failed call or check counts as wrong, with its reason
        verdict = {"valid": False, "error_type": f"{type(exc).__name__}: {exc}"}
    record["seconds"] = round(time.perf_counter() - start, 2)
    record["steps"] = turns
    record["valid"] = bool(verdict["valid"])
    if not record["valid"]:
        record["error"] = [verdict.get("error_type"), verdict.get("error_message")]
    return record


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    correct = sum(r["valid"] for r in records)
    seconds = sum(r["seconds"] for r in records)
    return {
        "n": n,
        "correct": correct,
        "accuracy": round(100 * correct / n, 1) if n else 0.0,
        "seconds_per_case": round(seconds / n, 2) if n else 0.0,
    }


def run_model(name: str, args: argparse.Namespace) -> dict[str, Any] | None:
    """Every asked category for one model; None when the model is not available."""
    chat = open_model(name, args.n_ctx)
    if chat is None:
        return None
    print(f"\nmodel {name}: {Path(getattr(chat, 'model_path', '') or name).name}")
    print(
        f"  {'category':<18}{'n':>4}{'acc%':>7}{'s/case':>8}   published FC: "
        + " / ".join(PUBLISHED)
    )
    out: dict[str, Any] = {
        "model": name,
        "file": str(getattr(chat, "model_path", "")),
        "categories": {},
    }
    start = time.perf_counter()
    label = re.sub(r"\W", "_", f"{CHECKER_MODEL}_{name}")
    for ours, theirs, count in plan(args):
        cases = load_cases(theirs, count, args.seed)
        if theirs == MULTI_TURN:
            records = [run_dialogue(chat, case, label) for case in cases]
        else:
            records = [run_case(chat, case) for case in cases]
        row = summarize(records)
        published = {model: scores.get(ours) for model, scores in PUBLISHED.items()}
        shown = " / ".join(f"{v:.1f}" if v is not None else "-" for v in published.values())
        print(
            f"  {ours:<18}{row['n']:>4}{row['accuracy']:>7.1f}{row['seconds_per_case']:>8.2f}"
            f"   {shown}"
        )
        out["categories"][ours] = {
            **row,
            "bfcl_category": theirs,
            "published": published,
            "cases": records,
        }
    out["seconds"] = round(time.perf_counter() - start, 1)
    print(f"  model run time: {out['seconds']:.1f} s")
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        action="append",
        help="0.5b, 1.5b or a GGUF path; repeatable or comma-separated (default: 0.5b,1.5b)",
    )
    parser.add_argument("--n", type=int, default=40, help="cases per category (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the subsets (default 0)")
    parser.add_argument(
        "--categories",
        default=",".join(CATEGORIES),
        help=f"comma-separated, of: {', '.join(CATEGORIES)}",
    )
    parser.add_argument(
        "--multi-turn",
        type=int,
        default=10,
        help="cases of multi_turn_base (default 10; 0 skips it)",
    )
    parser.add_argument(
        "--n-ctx",
        type=int,
        default=16384,
        help="context window of the local model (multi-turn tool docs are long)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="no model: the dataset's answers through the conversion and checker",
    )
    args = parser.parse_args(argv)
    args.models = [m for value in args.model or ["0.5b,1.5b"] for m in value.split(",") if m]
    args.categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    unknown = [c for c in args.categories if c not in CATEGORIES]
    if unknown:
        parser.error(f"unknown categories {unknown}; choose among {', '.join(CATEGORIES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.self_check:
        return self_check(args)
    start = time.perf_counter()
    print(
        f"BFCL (bfcl-eval {bfcl_version()}) through the local platform: seed {args.seed}, "
        f"{args.n} cases per category, {args.multi_turn} multi-turn"
    )
    runs = [r for r in (run_model(m, args) for m in args.models) if r is not None]
    total = round(time.perf_counter() - start, 1)
    print(f"\ntotal run time: {total:.1f} s")
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bfcl_eval": bfcl_version(),
        "seed": args.seed,
        "n": args.n,
        "multi_turn": args.multi_turn,
        "published_source": "BFCL v3 leaderboard, FC mode, Qwen2.5-0.5B/1.5B-Instruct",
        "models": runs,
        "total_seconds": total,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
