"""Every fix reshard-lint offers on its rule examples and fixtures: applied, checked, run.

Default run (static, a few seconds): every offered fix, safe and unsafe, is applied
(``check --fix --unsafe-fixes`` on a copy); the fixed files parse, use no name they do not
define (pyflakes), no longer get the finding a fix was for, are offered no fix that was not
applied, and a second ``--fix`` run changes nothing.

``-m slow``: the programs with fixes run under JAX before and after, on 8 CPU devices in
one process (the oracle's children, every platform mode: a fixed program raises nothing
the original did not raise, a fixed transfer no longer crosses), and, for the fixes of
multi-controller bugs (RSH201, RSH3xx), under real multi-controller JAX with 2 processes
of 4 CPU devices (a fixed transfer raises nothing on any process, and the fixed program
gets at least as far as the original did).

The figures are printed (``-s``) and said in docs/oracle.md.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from . import fixruns as fr

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is a test dependency")


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> fr.Applied:
    return fr.apply(tmp_path_factory.mktemp("fixruns"))


def test_every_offered_fix_applies_cleanly_and_once(applied: fr.Applied) -> None:
    print("\nfix figures:", json.dumps(dict(sorted(applied.figures.items()))))
    assert not applied.problems, "\n".join(applied.problems)


def test_the_corpus_offers_fixes_of_every_kind(applied: fr.Applied) -> None:
    # a corpus that lost its fixes would pass the other checks by checking nothing
    fig = applied.figures
    assert fig["offered_safe_examples"] + fig["offered_safe_fixtures"] >= 10
    assert fig["offered_unsafe_examples"] + fig["offered_unsafe_fixtures"] >= 100
    assert {c for c in ("RSH101", "RSH102", "RSH103", "RSH104", "RSH201", "RSH202") if fig[f"offered_{c}"]} == \
        {"RSH101", "RSH102", "RSH103", "RSH104", "RSH201", "RSH202"}


@needs_jax
@pytest.mark.slow
def test_fixed_programs_run_on_one_process(applied: fr.Applied, tmp_path: Path) -> None:
    """On 8 CPU devices, on every platform mode the oracle has: a fixed program raises
    nothing its original did not, and a fixed transfer crosses no device set or order."""
    from . import oracle as orc

    corpus = orc.Corpus("fixed-programs", fr.programs(applied.orig, applied),
                        [str(applied.orig)])
    orc.with_platforms(corpus.programs)
    for p in corpus.programs:  # a project module runs with the platforms of its project
        if p.id.startswith("fixtures/projects/"):
            orc.with_platforms([p], Path(p.root))
    result = orc.oracle([corpus], tmp_path, workers=2, fixes=True)
    failed = [f for f in result["findings"] if f["kind"] == "fix_failed"]
    statuses = result["program_status"]
    print(f"\none process, 8 CPU devices: {len(corpus.programs)} programs with fixes "
          f"(status before: {statuses}); fix figures: {result['fix_figures']}; failed: {len(failed)}")
    assert not failed, "\n".join(f"{f['path']}:{f['line']} {f['detail'][:400]}" for f in failed)
    assert corpus.programs and result["fix_figures"].get("programs_with_fixes", 0) == len(corpus.programs)


@needs_jax
@pytest.mark.slow
@pytest.mark.multicontroller
def test_fixed_multicontroller_programs_run_on_two_processes(applied: fr.Applied, tmp_path: Path) -> None:
    """Under real multi-controller JAX (2 processes x 4 CPU devices): a transfer a fix of
    RSH201 or RSH3xx changed raises nothing on any process, and the fixed program reaches
    every fixed transfer the original reached."""
    from ..multicontroller import harness

    before = fr.programs(applied.orig, applied, fr.MULTI_CODES)
    after = fr.programs(applied.fixed, applied, fr.MULTI_CODES)
    assert [p.id for p in before] == [p.id for p in after] and before
    outs = [tmp_path / f"{side}-{i}" for side in ("orig", "fixed") for i in range(len(before))]
    try:
        harness.run_batch([fr.snippet(p, o) for p, o in zip(before + after, outs)], mode="multi",
                          processes=2, devices=4, timeout=90)
    finally:
        harness.kill_all()
    problems: list[str] = []
    fig = {"programs": len(before), "fixed_sites": 0, "reached_before": 0, "crossing_error_before": 0,
           "reached_after": 0, "raised_after": 0}
    for i, prog in enumerate(before):
        runs_o = fr.read_runs(outs[i], 2)
        runs_f = fr.read_runs(outs[len(before) + i], 2)
        if None in runs_f:
            problems.append(f"{prog.id}: the fixed program left no record on some process: {runs_f}")
            continue
        for o in applied.offers:
            if o.path != prog.id or not o.code.startswith(fr.MULTI_CODES):
                continue
            fig["fixed_sites"] += 1
            was = fr.sites_at(runs_o, applied.orig / o.path, o.line)
            now = fr.sites_at(runs_f, applied.fixed / o.path, o.fixed_line)
            fig["reached_before"] += bool(was)
            fig["crossing_error_before"] += any(any(e in r.get("error", "") for e in fr.CROSSING_ERRORS)
                                                for r in was)
            fig["reached_after"] += bool(now)
            raised = [r["error"] for r in now if r.get("error")]
            fig["raised_after"] += bool(raised)
            if raised:
                problems.append(f"{o.path}:{o.line} {o.code} fixed ({o.title}): raises under 2 processes: {raised}")
            if was and not now:
                status = [(r or {}).get("error") for r in runs_f]
                problems.append(f"{o.path}:{o.line} {o.code}: reached before the fix, not after: {status}")
    print(f"\n2 processes x 4 CPU devices: {json.dumps(fig)}")
    assert fig["reached_after"] > 0
    assert not problems, "\n".join(problems)
