"""Code written for Python 3.12 (PEP 695 type parameters, PEP 701 f-strings) gets a tree on
older Pythons too: the gate, the slicing and the analysis see it, and the findings stay
where they were."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reshard_lint.stages import newer_syntax
from reshard_lint.engine.engine import Engine, check_source

GENERIC = textwrap.dedent("""\
    import functools
    from typing import Any, Callable


    def decorator[T: Callable[..., Any]](rule: T) -> T:
        return rule


    class Box[
        K,  # a key
        V: (int, str),
    ](dict):
        def get_one[D](self, key: K, default: D) -> V | D:
            return self.get(key, default)


    type Pair[A] = tuple[A, A]
    type Names = list[str]
    type = "a name, not a statement"
    x = type
""")

BUG = textwrap.dedent("""\
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


    def helper[T](value: T) -> T:
        return value


    def step():
        m = Mesh(np.array(jax.devices()), ('x',))
        a = jax.device_put(np.ones(8), NamedSharding(m, P('x')))
        h = Mesh(np.array(jax.devices()[:4]), ('x',))
        return jax.device_put(a, NamedSharding(h, P('x')))
""")


def test_type_parameters_are_blanked_in_place() -> None:
    blanked = newer_syntax.without_type_params(GENERIC)
    assert blanked is not None
    assert len(blanked) == len(GENERIC) and blanked.count("\n") == GENERIC.count("\n")
    assert "def decorator" + " " * len("[T: Callable[..., Any]]") + "(rule: T) -> T:" in blanked
    assert "class Box\\\n" in blanked and "\n (dict):\n" in blanked  # the lines stay joined
    assert "_=0; Pair    = tuple[A, A]" in blanked and "_=0; Names = list[str]" in blanked
    assert 'type = "a name, not a statement"' in blanked and "x = type" in blanked
    tree = ast.parse(blanked)
    names = [(n.name, n.lineno, n.col_offset) for n in ast.walk(tree)
             if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert sorted(names) == [("Box", 9, 0), ("decorator", 5, 0), ("get_one", 13, 4)]


def test_text_python_cannot_read_keeps_its_syntax_error() -> None:
    # The error Python gives for the text as written (libcst says what is really wrong).
    with pytest.raises(SyntaxError) as info:
        newer_syntax.parse("def f[T](x):\n    return (\n")
    assert info.value.lineno == 1 if sys.version_info < (3, 12) else info.value.lineno > 1
    assert newer_syntax.without_type_params("def f[T(x):\n    pass\n") is None  # never closes
    assert newer_syntax.without_type_params("def f[T: 'A]'](x): pass\n") == "def f" + " " * len("[T: 'A]']") + "(x): pass\n"


def test_a_generic_file_is_gated_and_its_finding_found() -> None:
    engine = Engine()
    assert check_source(GENERIC.replace("import functools", "import jax  # devices, Mesh"), "generic.py",
                        imported=frozenset(), analyse=False).prepared is None
    assert check_source(BUG, "bug.py", imported=frozenset(), analyse=False).prepared is not None
    whole = engine.lint_source(BUG, "bug.py", slice_min_lines=10**9)
    sliced = engine.lint_source(BUG, "bug.py", slice_min_lines=0)
    assert [(d.line, d.col, d.code) for d in sliced.diagnostics] == \
        [(d.line, d.col, d.code) for d in whole.diagnostics] == [(14, 11, "RSH201")]


def test_the_command_reports_a_generic_file_like_any_other(tmp_path: Path) -> None:
    (tmp_path / "bug.py").write_text(BUG)
    (tmp_path / "generic.py").write_text(GENERIC)
    proc = subprocess.run([sys.executable, "-m", "reshard_lint", "check", "--no-cache", "--format",
                           "concise", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if ": RSH" in line]
    assert len(lines) == 1 and lines[0].startswith(f"{tmp_path / 'bug.py'}:14:12: RSH201"), proc.stdout


PEP701 = (
    'import jax\n'
    'from jax.sharding import Mesh\n'
    'errors = ["a"]\n'
    'report = f\'Found:\\n{"\\n".join(errors)}\'\n'
    'nested = f"{f"{f"{1}"}"}"\n'
    'kept = f"{errors[0]!r:>{8}}" "tail"\n'
    'm = Mesh(jax.devices()[::-1], ("x",))\n'
)


def test_pep701_fstrings_are_blanked_in_place_and_the_rest_kept() -> None:
    blanked = newer_syntax.without_new_fstrings(PEP701)
    assert blanked is not None and len(blanked) == len(PEP701)
    assert blanked.splitlines()[5] == PEP701.splitlines()[5]  # Python 3.11 parses that one
    assert blanked.splitlines()[3].startswith('report = "') and blanked.splitlines()[3].rstrip().endswith('"')
    tree = ast.parse(blanked)
    assert [type(s).__name__ for s in tree.body] == ["Import", "ImportFrom", "Assign", "Assign", "Assign",
                                                     "Assign", "Assign"]


def test_a_file_with_pep701_fstrings_is_analysed() -> None:
    result = Engine().lint_source(PEP701, "f.py", force=True)
    assert [(d.code, d.line, d.col) for d in result.diagnostics] == [("RSH102", 7, 4)]


def test_an_unclosed_fstring_is_left_to_the_parse_error() -> None:
    assert newer_syntax.without_new_fstrings('x = f"{a\n') is None
