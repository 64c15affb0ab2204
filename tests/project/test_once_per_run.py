"""``reshard-lint check`` and ``coverage`` analyse a module once per run, however many
files import it and however many worker processes share the work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reshard_lint.frontends.cli import main
from reshard_lint.project.view import Project

MESH = """import jax
import numpy as np
from jax.sharding import Mesh

TRAIN = Mesh(np.array(jax.devices()), ("x",))
ROLLOUT = Mesh(np.array(jax.devices()[:2]), ("x",))
"""

USER = """import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from app.mesh import ROLLOUT, TRAIN

weights = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P("x")))
rollout = jax.device_put(weights, NamedSharding(ROLLOUT, P()))
"""

# Enough work after the gate that `check` shares it with its workers (runner.py).
FILLER = "".join(f"\n\ndef layer_{k}(x):\n    y = jax.numpy.dot(x, x) + {k}\n    return y * 0.5\n" for k in range(40))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "mesh.py").write_text(MESH)
    for i in range(40):
        (root / "app" / f"user_{i}.py").write_text(USER + FILLER)
    # Enough bytes that `check` forks workers at all (pipeline.worth_workers).
    (root / "app" / "filler.py").write_text("x = 1\n" * 100_000)
    for i in range(40):
        # Files with meshes of their own, for the workers.
        (root / "app" / f"own_{i}.py").write_text(MESH + USER.split("from app.mesh")[0] + FILLER)
    return root


@pytest.fixture
def summaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file each process (forked workers inherit the patch) appends to per summary made."""
    log = tmp_path / "summaries.log"
    made = Project.summary

    def counted(self: Project, mod: object, full: bool = False) -> object:
        before = dict(self._summaries)
        out = made(self, mod, full)  # type: ignore[arg-type]
        if out is not None and before.get(mod.key) is not out:  # type: ignore[attr-defined]
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {mod.name}\n")  # type: ignore[attr-defined]
        return out

    monkeypatch.setattr(Project, "summary", counted)
    return log


def test_check_summarises_an_imported_module_once(project: Path, summaries: Path,
                                                  monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(project)
    assert main(["check", "--no-cache", "--isolated", "-j", "2", "--format", "concise", "."]) == 1
    assert capsys.readouterr().out.count("RSH201") == 40
    assert [line.split()[1] for line in summaries.read_text().splitlines()] == ["app.mesh"]


def test_coverage_summarises_an_imported_module_once(project: Path, summaries: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    assert main(["coverage", "--isolated", "-j", "2", "."]) == 0
    assert [line.split()[1] for line in summaries.read_text().splitlines()] == ["app.mesh"]
