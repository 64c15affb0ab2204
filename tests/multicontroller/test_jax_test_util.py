"""tests/fixtures/jax_test_util.py under real JAX: jax's own test helpers
(``jtu.create_mesh``, ``@jtu.with_explicit_mesh``) as the analysis reads them. Each
function or test method with a marker does what its rule claims, in two processes of
8 CPU devices and in one of 16; each clean one runs in both."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reshard_lint.rules import expected_markers

from ..conftest import FIXTURES
from .claims import assert_claimed
from .harness import SnippetResult, run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_jax_test_util")]

FIXTURE = FIXTURES / "jax_test_util.py"


def _cases(path: Path) -> list[tuple[str, set[str]]]:
    """(the call that runs it, the codes its lines are marked with) per function and test method."""
    text = path.read_text(encoding="utf-8")
    marks = expected_markers(text)
    out: list[tuple[str, set[str]]] = []

    def codes(node: ast.AST) -> set[str]:
        return {code for line, _, code in marks if node.lineno <= line <= (node.end_lineno or node.lineno)}

    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            out.append((f"m.{node.name}()", codes(node)))
        elif isinstance(node, ast.ClassDef):
            out += [(f"m.{node.name}().{f.name}()", codes(f))
                    for f in node.body if isinstance(f, ast.FunctionDef)]
    return out


CASES = _cases(FIXTURE)


def _snippet(call: str) -> str:
    return ("import importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('jax_test_util_fixture', {str(FIXTURE)!r})\n"
            "m = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\n"
            f"{call}\n")


@pytest.fixture(scope="module")
def runs() -> dict[str, list[SnippetResult]]:
    pytest.importorskip("absl")  # jax._src.test_util imports it
    snippets = [_snippet(call) for call, _ in CASES]
    # The fixture's meshes take 16 devices: two processes of 8, or one process of 16.
    return {mode: run_batch(snippets, mode=mode, processes=2, devices=8, timeout=90.0)
            for mode in ("multi", "single")}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[call for call, _ in CASES])
def test_jax_test_util_fixture_does_what_its_markers_claim(index: int, runs: dict[str, list[SnippetResult]]) -> None:
    codes = CASES[index][1]
    multi, single = runs["multi"][index], runs["single"][index]
    if not codes:
        assert multi.all_ok(), multi.details()
        assert single.all_ok(), single.details()
        return
    assert_claimed(codes, multi, single)
