"""Property tests: on any program the engine and the flake8 plugin return, and fixes
keep the program parseable and reach a fixpoint.

Two sources of programs: hypothesmith's grammar-generated programs (odd syntax, no
JAX), and the JAX idioms of the rules' examples and the fixtures, mutated (lines
deleted, duplicated, swapped, slices and names changed, code wrapped in functions,
classes, ifs and loops) so that the abstract interpreter sees half-broken versions
of exactly the code it models.

A CI run is bounded and deterministic; a longer run is one command:

    RESHARD_LINT_FUZZ_EXAMPLES=5000 /work/venv/bin/python -m pytest tests/robustness/test_fuzz.py
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reshard_lint.core import fixes
from reshard_lint.engine.engine import INTERNAL_ERROR, Engine
from reshard_lint.frontends.flake8_plugin import ReshardChecker
from reshard_lint.rules import all_rules

ROOT = Path(__file__).resolve().parents[2]
ENGINE = Engine()
EXAMPLES = int(os.environ.get("RESHARD_LINT_FUZZ_EXAMPLES", "0")) or None

CORPUS: list[str] = sorted({ex.code for rule in all_rules() for ex in rule.examples}
                           | {ex.fixed for rule in all_rules() for ex in rule.examples if ex.fixed}
                           | {p.read_text() for p in (ROOT / "tests" / "fixtures").glob("*.py")})


def _hypothesmith() -> Any:
    # Imported and its grammar built when a test draws from it, not when pytest collects
    # this module (seconds of CPU in every run, and in every xdist worker).
    import hypothesmith

    return hypothesmith


def _settings(default: int) -> settings:
    return settings(max_examples=EXAMPLES or default, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True)


# ---- mutations ---------------------------------------------------------------------

_SLICES = ["[::-1]", "[::2]", "[1:]", "[:-1]", "[::1]", "[:4]", "[4:]", "[::-2]", "[0]", "[-1]", "[1::2]", ""]
_NAMES = ["jax", "np", "mesh", "devices", "Mesh", "NamedSharding", "P", "x", "self", "shard", "d",
          "jax.devices", "jax.local_devices", "np.array", "reversed", "sorted", "random.shuffle", "None",
          "lambda: 0", "(1, 2)", "[]", "'data'", "*a", "**k", "x.T", "jax.device_put"]
_WRAPPERS = ["def f():", "def g(mesh, *args, **kw):", "class C:", "if flag:", "for i in range(3):",
             "while cond:", "with ctx:", "try:", "async def h():", "if __name__ == '__main__':"]
# Weighted towards edits that keep the program parseable, so that most examples reach
# the analyzer and the fixes rather than stopping at RSH001.
_OPS = ["delete", "delete", "duplicate", "duplicate", "swap", "token", "token", "token", "slice", "slice",
        "slice", "slice", "wrap", "wrap", "wrap", "indent", "newline", "truncate"]
_TOKEN = re.compile(r"\[[^\[\]\n]*\]|[A-Za-z_][A-Za-z_0-9.]*|\d+|'[^'\n]*'")


@st.composite
def mutated_program(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(CORPUS)).splitlines(keepends=True)
    if draw(st.booleans()):
        # Splice a second program in: two meshes, two sets of names.
        other = draw(st.sampled_from(CORPUS)).splitlines(keepends=True)
        at = draw(st.integers(0, len(lines)))
        lines[at:at] = other
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            lines = ["x = 1\n"]
        op = draw(st.sampled_from(_OPS))
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), line)
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op in ("token", "slice"):
            spans = [m.span() for m in _TOKEN.finditer(line)]
            if spans:
                a, b = draw(st.sampled_from(spans))
                new = draw(st.sampled_from(_SLICES if op == "slice" or line[a] == "[" else _NAMES))
                lines[i] = line[:a] + new + line[b:]
        elif op == "wrap":
            j = draw(st.integers(i, len(lines)))
            header = draw(st.sampled_from(_WRAPPERS))
            indent = re.match(r"[ \t]*", line).group(0)  # type: ignore[union-attr]
            body = ["    " + x if x.strip() else x for x in lines[i:j]] or ["    pass\n"]
            tail = [indent + "except Exception:\n", indent + "    pass\n"] if header == "try:" else []
            lines[i:j] = [indent + header + "\n", *body, *tail]
        elif op == "indent":
            lines[i] = draw(st.sampled_from(["    ", "\t", " "])) + line
        elif op == "newline":
            ending = draw(st.sampled_from(["\r\n", "\r", "\n", "\x0c\n", "\\\n"]))
            lines[i] = line.rstrip("\r\n") + ending
        else:  # truncate mid-line: unterminated brackets and strings
            lines[i] = line[:draw(st.integers(0, len(line)))]
    return "".join(lines)


# ---- the properties ----------------------------------------------------------------

def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def check_program(source: str) -> None:
    for force in (False, True):
        result = ENGINE.lint_source(source, "fuzz.py", force=force)
        internal = [d for d in result.diagnostics if d.code == INTERNAL_ERROR]
        assert not internal, f"engine bug on:\n{source}\n{internal[0].message}"

    try:
        tree: ast.AST | None = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None:  # flake8 only runs tree plugins on files Python can parse
        lines = fixes.split_lines(source)
        out = list(ReshardChecker(tree, "fuzz.py", lines).run())
        failed = [m for m in out if m[2].startswith(INTERNAL_ERROR)]
        assert not failed, f"flake8 plugin failed on:\n{source}\n{out}"

    if not _parses(source):
        return
    current = source
    for _ in range(20):
        diags = ENGINE.lint_source(current, "fuzz.py", force=True).diagnostics
        new, _applied = fixes.apply(current, diags, unsafe=True)
        if new == current:
            break
        assert _parses(new), f"fix broke the program:\n--- before\n{current}\n--- after\n{new}"
        current = new
    else:
        raise AssertionError(f"fixes did not reach a fixpoint in 20 rounds:\n{source}")
    second = ENGINE.lint_source(current, "fuzz.py", force=True).diagnostics
    again, _ = fixes.apply(current, second, unsafe=True)
    assert again == current


@_settings(300)
@given(mutated_program())
def test_mutated_jax_programs(source: str) -> None:
    check_program(source)


@_settings(60)
@given(st.deferred(lambda: _hypothesmith().from_grammar()))
def test_grammar_programs(source: str) -> None:
    check_program(source)


@_settings(60)
@given(st.deferred(lambda: _hypothesmith().from_node()))
def test_node_programs(source: str) -> None:
    check_program(source)


def test_corpus_as_is() -> None:
    for source in CORPUS:
        check_program(source)


@st.composite
def corrupted_program(draw: st.DrawFn) -> str:
    """A corpus program with arbitrary characters (lone surrogates, NUL, form feeds,
    line separators) put in: text that reaches the engine from an editor or stdin."""
    text = draw(st.sampled_from(CORPUS))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(min_size=1, max_size=3)) + text[at:]
    return text


@_settings(200)
@given(st.one_of(st.text(), corrupted_program()))
def test_arbitrary_text(source: str) -> None:
    for force in (False, True):
        result = ENGINE.lint_source(source, "fuzz.py", force=force)
        assert not [d for d in result.diagnostics if d.code == INTERNAL_ERROR], source


def test_lone_surrogate_is_a_parse_error_not_an_exception() -> None:
    # Found by test_arbitrary_text (then with libcst's parser, which raised UnicodeEncodeError).
    result = ENGINE.lint_source("x = '\ud800'\n", "fuzz.py", force=True)
    assert [d.code for d in result.diagnostics] == ["RSH001"]
    assert "not valid Unicode text" in (result.error or "")


def test_identifier_newer_than_this_pythons_unicode_is_a_parse_error() -> None:
    # Found by test_arbitrary_text: libcst's native parser took U+2EBF0 as a name, its
    # Python side then raised CSTValidationError out of lint_source.
    result = ENGINE.lint_source("\U0002ebf0\n", "fuzz.py", force=True)
    assert [d.code for d in result.diagnostics] == ["RSH001"]


@pytest.mark.parametrize("shape", ["+", "lambda"])
def test_chains_just_under_the_nesting_guard_are_analysed(shape: str) -> None:
    # The guard (nesting.py) lets 1,000 deep through: the tree is built and analysed
    # under the engine's recursion limit (a 990-deep chain raised RecursionError once).
    body = "lambda: " * 990 + "a" if shape == "lambda" else "+".join(["a"] * 990)
    source = f"import jax\nfrom jax.sharding import Mesh\nx = {body}\nm = Mesh(jax.devices()[::-1], ('x',))\n"
    result = ENGINE.lint_source(source, "fuzz.py", force=True)
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH102", 4)]
