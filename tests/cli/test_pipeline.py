"""`check` shares the gate and the engine between worker processes and itself.

The results must not depend on how the work was shared, and a worker that dies (killed,
out of memory) must cost no file its diagnostics: each test compares against a run in
one process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reshard_lint.engine import engine as engine_module
from reshard_lint.engine import pipeline, runner
from reshard_lint.core.cache import Cache

from .conftest import CLEAN, CROSS, REORDERED, run, write
from .test_check import codes

SMALLEST = "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\nm = Mesh(np.array(jax.devices()[::-1]), ('x',))\n"
FILLER = "x = 1\n" * 100_000  # 600 KB the prefilter rejects
PADDING = "".join(f"def helper_{i}(devices):\n    return len(jax.devices()) + {i}\n" for i in range(100))


def _tree(root: Path) -> list[str]:
    paths = []
    for i in range(80):
        text = (REORDERED, CROSS, CLEAN, "x = 1\n", CROSS + PADDING)[i % 5]
        paths.append(str(write(root, f"d{i % 4}/m{i:02d}.py", text)))
    # The first file read (a worker gates it first), and the smallest file with a finding
    # (a worker analyses it first when the engine's files are shared out).
    paths.append(str(write(root, "aa_first.py", CROSS + PADDING + PADDING)))
    paths.append(str(write(root, "ab_smallest.py", SMALLEST)))
    # Enough bytes that `check` forks workers at all (pipeline.worth_workers).
    paths.append(str(write(root, "zz_filler.py", FILLER)))
    return sorted(paths)


def _diagnostics(paths: list[str], jobs: int, cache_dir: Path) -> dict[str, list[tuple[int, int, str]]]:
    reports = runner.lint_files(paths, {}, Cache(str(cache_dir), {}), jobs, [])
    return {r.path: [(d.line, d.col, d.code) for d in r.diagnostics] for r in reports}


def test_the_same_findings_with_1_2_and_4_jobs(project: Path) -> None:
    _tree(project)
    outs = [run("check", "--format", "concise", "--no-cache", "-j", j, cwd=project).stdout
            for j in ("1", "2", "4")]
    assert outs[0] == outs[1] == outs[2]
    found = codes(outs[0])
    assert found == sorted(found) and len(found) == 16 * 3 + 16 + 16 + 1 + 1


@pytest.mark.parametrize("stage", ["gate", "engine"])
def test_a_worker_that_dies_loses_no_file(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          stage: str) -> None:
    paths = _tree(project / "src")
    expected = _diagnostics(paths, 1, tmp_path / "serial")
    assert sum(len(d) for d in expected.values()) == 16 * 3 + 16 + 16 + 1 + 1
    parent = os.getpid()
    victim = str(project / "src" / ("aa_first.py" if stage == "gate" else "ab_smallest.py"))
    died = tmp_path / "died"

    victim_text = Path(victim).read_text()

    def dies_in_a_worker(real):  # type: ignore[no-untyped-def]
        # Patched where the worker calls it at run time (the task itself is pickled by
        # reference, so its function must be the module's own).
        def wrapped(arg, *rest, **options):  # type: ignore[no-untyped-def]
            text = arg if isinstance(arg, str) else arg[1]
            gating = options.get("analyse", True) is False  # check_source up to the slicing
            if os.getpid() != parent and text == victim_text and (stage == "engine" or gating):
                died.write_text(stage)
                os._exit(9)  # as the kernel's OOM killer would leave it: no cleanup
            return real(arg, *rest, **options)
        return wrapped

    if stage == "gate":
        # The first file read is the first one queued for the worker.
        monkeypatch.setattr(engine_module, "check_source", dies_in_a_worker(engine_module.check_source))
    else:
        # Nothing analysed while the gate runs, and all of it shared afterwards, so the
        # smallest file is the first one a worker analyses.
        real_gate_and_analyse = pipeline.gate_and_analyse

        def gate_only(workers, items, gate, analyse, reject):  # type: ignore[no-untyped-def]
            later: list[tuple[int, str, str]] = []
            return real_gate_and_analyse(workers, items, gate, later.append, reject) + later

        monkeypatch.setattr(pipeline, "gate_and_analyse", gate_only)
        monkeypatch.setattr(runner, "MIN_SHARED_LINES", 0)
        monkeypatch.setattr(runner, "_work", dies_in_a_worker(runner._work))
    assert _diagnostics(paths, 2, tmp_path / "shared") == expected
    assert died.read_text() == stage


def test_a_small_tree_is_checked_without_workers(project: Path) -> None:
    # 82 files of ~150 KB: forking a worker would cost memory for the same wall time.
    paths = _tree(project)
    small = [p for p in paths if not p.endswith("zz_filler.py")]
    assert not pipeline.worth_workers(small)
    assert pipeline.worth_workers(paths)
    assert not pipeline.worth_workers(paths[:pipeline.MIN_PARALLEL_GATE - 1])


def _lines(item: tuple[int, str, str]) -> int:
    return item[1].count("\n")


def test_long_files_kept_here_run_after_the_workers_are_let_go() -> None:
    # A long file's tree beside the idle workers' memory made `check`'s peak.
    items = [(i, "x = 1\n" * n, f"m{i}.py") for i, n in enumerate([1, 2, 3, pipeline.HOLD_LINES])]
    ran_here: list[tuple[int, bool]] = []
    results: dict[int, int] = {}
    with pipeline.Workers(1, len(items)) as workers:
        pipeline.share_keeping(workers, 1, items, lambda item: item[0] in (0, 3), _lines,
                               lambda item, n: results.__setitem__(item[0], n),
                               lambda item: ran_here.append((item[0], workers._pool is None)))
    assert sorted(i for i, _ in ran_here) == [0, 3] and sorted(results) == [1, 2]
    assert (3, True) in ran_here  # the long one, with the workers gone
