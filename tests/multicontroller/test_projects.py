"""The fixture projects under real multi-controller JAX: each module with a finding fails
as its rule claims, each clean look-alike runs on every process, with the project root
on the path as a user runs it (``python -m mypkg.sync`` from the root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reshard_lint.rules import expected_markers, rule_by_code

from ..conftest import FIXTURES
from .claims import assert_claimed
from .harness import SnippetResult, run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_projects")]

PROJECTS = FIXTURES / "projects"
# Modules a user runs; the others are imported by them.
ENTRIES = {
    "crossing": ["mypkg.sync", "mypkg.sync_alias", "mypkg.sync_star", "scripts.train"],
    "clean": ["app.same", "app.shadowed", "app.uses_rebound", "app.cycle_a"],
    "factories": ["lab.train", "lab.pair", "lab.same", "lab.callers", "lab.trainer", "lab.serve"],
    "classes": ["fleet.train", "fleet.same", "fleet.instances"],
    "movers": ["ops.sync", "ops.same", "ops.jitted", "ops.tree", "ops.script"],
    "guarded": ["hosts.sync", "hosts.same"],
    "containers": ["team.train", "team.context", "team.same"],
    "tables": ["tablepkg.sync_dict", "tablepkg.sync_changed", "tablepkg.patched"],
    "reexports": ["scripts.train"],
    "configs": ["cfgpkg.train", "cfgpkg.layout"],
    "jitted": ["jitpkg.train_step", "jitpkg.train_scale", "jitpkg.reordered", "jitpkg.train_double",
               "jitpkg.constrain", "jitpkg.passed", "jitpkg.shardings", "jitpkg.sizes", "jitpkg.local", "jitpkg.same"],
    "slices": ["stagepkg.pipeline", "stagepkg.roles", "stagepkg.same", "stagepkg.serve"],
    "loops": ["steppkg.train", "steppkg.branches", "steppkg.rounds", "steppkg.same", "steppkg.mixed"],
    "feeds": ["feedpkg.train", "feedpkg.same"],
}
CASES = [(project, module) for project, modules in ENTRIES.items() for module in modules]
# Entries whose run shows another module's markers: a finding reported at its own line in
# a module the entry reaches through a generator it iterates (no call relays a generator).
CLAIMS_OF = {("feeds", "feedpkg.train"): "feedpkg.local_loader"}


def _path(project: str, module: str) -> Path:
    return PROJECTS / project / (module.replace(".", "/") + ".py")


def _snippet(project: str, module: str) -> str:
    root = PROJECTS / project
    return (f"import runpy, sys\nsys.path.insert(0, {str(root)!r})\n"
            f"runpy.run_module({module!r}, run_name='__main__')\n")


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[tuple[str, str], SnippetResult]]:
    snippets = [_snippet(p, m) for p, m in CASES]
    out: dict[str, dict[tuple[str, str], SnippetResult]] = {}
    for mode in ("multi", "single"):
        # multi: 2 processes of 4 CPU devices; single: one process of all 8.
        results = run_batch(snippets, mode=mode, processes=2, devices=4, timeout=60.0)
        out[mode] = dict(zip(CASES, results))
    return out


@pytest.mark.parametrize("project,module", CASES, ids=[f"{p}:{m}" for p, m in CASES])
def test_fixture_project_does_what_its_markers_claim(project: str, module: str,
                                                     runs: dict[str, dict[tuple[str, str], SnippetResult]]) -> None:
    claimed = _path(project, CLAIMS_OF.get((project, module), module))
    codes = {code for _, _, code in expected_markers(claimed.read_text(encoding="utf-8"))}
    multi, single = runs["multi"][(project, module)], runs["single"][(project, module)]
    if not codes:
        assert single.all_ok(), single.details()
        assert multi.all_ok(), multi.details()
        return
    # One process of all the devices too: runs, or fails as the rule claims there (RSH203).
    assert_claimed(codes, multi, single)
    if not any(rule_by_code(code).grounding.single for code in codes):  # type: ignore[union-attr]
        assert single.all_ok(), single.details()
