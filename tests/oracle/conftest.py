"""The oracle's pytest fixture: ``oracle_run(paths)`` runs programs or projects under JAX
on 8 CPU devices (in child processes) and returns what every transfer site did."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def oracle_run(tmp_path: Path):
    """``oracle_run(*paths, compare=False)``: the concrete records ({platform: {program: result}});
    with ``compare=True`` the full comparison with reshard-lint (findings and figures)."""
    from . import oracle as orc
    from .__main__ import _paths_corpus
    from .run import run_concrete

    def run(*paths: str | Path, compare: bool = False, fixes: bool = False) -> dict:
        corpus = _paths_corpus([str(p) for p in paths])
        if compare:
            return orc.oracle([corpus], tmp_path, workers=1, fixes=fixes)
        return run_concrete(corpus.programs, workers=1, platforms=("cpu",))

    return run
