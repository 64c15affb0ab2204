"""What the flake8 entry point does to the process it runs in.

It tunes the garbage collector (docs/architecture.md, docs/performance.md); the user's
flake8 must get it back as it was, also when the analysis fails.
"""

from __future__ import annotations

import ast
import gc
import multiprocessing
from pathlib import Path
from typing import Iterator

import pytest

from reshard_lint.core import collector
from reshard_lint.engine import engine as engine_module
from reshard_lint.frontends.flake8_plugin import ReshardChecker

SOURCE = (
    "import jax\n"
    "import numpy as np\n"
    "from jax.sharding import Mesh\n"
    "\n"
    "mesh = Mesh(np.array(jax.devices()[::-1]), ('x',))\n"
)


def _run(source: str = SOURCE) -> list[tuple[int, int, str]]:
    lines = source.splitlines(keepends=True)
    checker = ReshardChecker(ast.parse(source), "m.py", lines)
    return [(line, col, text) for line, col, text, _ in checker.run()]


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # As in a new flake8 worker: nothing frozen yet by the plugin.
    monkeypatch.setattr(collector, "_frozen", False)
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()


def test_findings_come_back_with_the_collector_on_and_libcst_frozen(fresh_process: None) -> None:
    gc.unfreeze()
    gc.enable()
    found = _run()
    assert [(line, col, text[:6]) for line, col, text in found] == [(5, 7, "RSH102")]
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0  # libcst and the engine are no longer rescanned
    frozen = gc.get_freeze_count()
    _run()
    # Once per process, not once per file (frozen objects that die leave the count).
    assert gc.get_freeze_count() <= frozen


def test_a_collector_flake8_had_off_stays_off(fresh_process: None) -> None:
    gc.disable()
    assert [text[:6] for _, _, text in _run()] == ["RSH102"]
    assert not gc.isenabled()


def test_the_collector_is_back_on_when_the_analysis_fails(fresh_process: None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(settings: object = None) -> None:  # the engine is built inside the pause
        raise RuntimeError("boom")

    monkeypatch.setattr(engine_module, "engine_for", broken)
    gc.enable()
    assert _run() == [(1, 0, "RSH002 internal error in reshard-lint: RuntimeError: boom")]
    assert gc.isenabled()


def test_files_that_stop_at_the_gate_touch_nothing(fresh_process: None) -> None:
    gc.enable()
    gc.unfreeze()
    assert _run("import jax\nx = jax.numpy.zeros(3)\n") == []
    assert gc.isenabled() and gc.get_freeze_count() == 0


def _options(tmp_path: Path, *argv: str) -> object:
    from flake8.main.application import Application

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    app = Application()
    app.initialize(["--isolated", *argv])
    return app.options


@pytest.mark.parametrize("argv,forks", [
    (("{dir}",), multiprocessing.cpu_count() > 1),  # flake8's default: a worker per core
    (("-j", "2", "--select", "RSH", "{dir}"), True),
    (("-j", "1", "{dir}"), False),
    (("--select", "F", "{dir}"), False),  # RSH not selected: no engine at all
    (("{dir}/a.py",), False),  # one file: checked in this process, maybe not past the gate
    (("-",), False),
])
def test_the_engine_is_imported_before_flake8_forks_its_workers_only_when_they_run_it(
        tmp_path: Path, argv: tuple[str, ...], forks: bool) -> None:
    from reshard_lint.frontends.preload import forks_workers

    options = _options(tmp_path, *(a.format(dir=tmp_path) for a in argv))
    assert forks_workers(options) is forks


def test_a_preload_that_fails_leaves_flake8_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reshard_lint.frontends import preload

    def broken() -> None:
        raise ImportError("no libcst here")

    monkeypatch.setattr(preload, "preload", broken)
    preload.before_workers(_options(tmp_path, "-j", "2", str(tmp_path)))  # no exception
