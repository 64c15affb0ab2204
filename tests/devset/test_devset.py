"""The development set under the oracle (tests/devset/devset.py): every label's effect
seen by a real multi-controller run at its site, clean projects running without an
error, and no verdict of ``reshard-lint coverage`` contradicted by a run, in one process
and as a real job.

The default run takes all 26 projects as 2 processes and in one process; ``-m devset_full``
also runs them as 4 processes (figures in docs/oracle.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import devset
from .labels import load_projects

pytestmark = pytest.mark.multicontroller

# Labels whose effect no run shows at their site: findings about the labels (docs/oracle.md).
UNSEEN = {
    # Mesh(trainer.mesh.devices.T, ("model", "data")) with P("data", "model") gives every
    # device the piece it held on the trainer's mesh: JAX relabels the shards, no data moves
    ("evaluator_transposed_trainer_mesh", "CROSS-MESH-PUT@lmtrain/evaluator.py:13|train.py:12"),
}


def _devset() -> Path:
    src = devset.devset_dir()
    if not (src / "projects").is_dir():
        pytest.skip(f"the development set is not at {src} (CI puts shared/ beside the clone; "
                    "RESHARD_LINT_DEVSET names another place)")
    return src


def _check(results: list[devset.Result]) -> None:
    problems = []
    for r in results:
        name = r.project.name
        for item, ok in r.seen.items():
            if not ok and (name, item) not in UNSEEN:
                problems.append(f"{name}: no run shows the effect of {item}")
            if ok and (name, item) in UNSEEN:
                problems.append(f"{name}: {item} is now seen: take it out of UNSEEN")
        if r.project.clean and r.statuses != ["ok"] * len(r.statuses):
            problems.append(f"{name}: a clean project's run ended {r.statuses}: {r.notes}")
        for mode, findings in r.findings.items():
            problems += [f"{name} [{mode}]: {f['kind']} at {f['path']}:{f['line']}: {f['detail'][:300]}"
                         for f in findings]
    assert not problems, "\n".join(problems) + "\n\n" + devset.table(results)


def _run(tmp_path: Path, names: tuple[str, ...] | None, processes: int, one_process: bool) -> list:
    projects = devset.copy_projects(_devset(), tmp_path, list(names) if names else None)
    results, times = devset.run(projects, tmp_path, processes, one_process)
    print(devset.table(results))
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
    return results


def test_labels_parse() -> None:
    projects = load_projects(_devset() / "projects")
    assert len(projects) == 26
    assert sum(len(p.expected) for p in projects) == 22  # the set's README
    assert all(p.entry for p in projects)


def test_every_project_two_processes_and_one(tmp_path: Path) -> None:
    # In the default run: all 26 as 2-process jobs and in one process (about 35 s on an
    # idle 2-core machine, 2026-12-07); the 4-process jobs are -m devset_full's.
    results = _run(tmp_path, None, 2, True)
    assert len(results) == 26
    _check(results)


@pytest.mark.devset_full
def test_every_project_four_processes(tmp_path: Path) -> None:
    _check(_run(tmp_path, None, 4, False))
