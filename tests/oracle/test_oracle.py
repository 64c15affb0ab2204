"""The oracle over every fixture, rule example and fixture project, and a sample of
generated projects: the analysis's verdicts against what the programs do under JAX.

A false positive, wrong verdict, wrong claim or failed fix that tests/oracle/known.json
does not list fails; so does a listed one that no longer happens. Misses (crossings
the analysis left unresolved) are figures, printed, not failures.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from . import known as kn
from . import oracle as orc

# the default run's sample of generated projects (development seeds)
SAMPLE = range(0, 40)

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is a test dependency")


@pytest.fixture(scope="module")
def combined(tmp_path_factory) -> dict:
    """One oracle run (one static run, one pair of children) over the standard corpus
    and the generated sample."""
    from . import generator as gen

    work = tmp_path_factory.mktemp("oracle")
    corpora = orc.standard_corpora(work) + [gen.corpus(work / "generated", SAMPLE)]
    result = orc.oracle(corpora, work, workers=2)
    result["findings"] = orc.relative(result["findings"], work)
    print("\n" + orc.text_report(result))
    return result


@pytest.fixture(scope="module")
def standard(combined: dict) -> dict:
    return combined


@pytest.fixture(scope="module")
def sample(combined: dict) -> dict:
    return combined


def _generated_file(f: str) -> bool:
    # (and jax's own tests, compared in the long run only)
    return f.startswith(("generated/", "jax/tests/"))


def _jax_tests_file(f: str) -> bool:
    return f.startswith("jax/tests/")


def test_standard_corpus_matches_the_baseline(standard: dict) -> None:
    new, gone = kn.unexplained(standard["findings"], scope=lambda f: not _generated_file(f))
    assert not new, "new oracle findings (fix them or list them in tests/oracle/known.json):\n" + \
        "\n".join(f"{f['kind']} {f['path']}:{f['line']} {f['detail'][:300]}" for f in new)
    assert not gone, "listed in tests/oracle/known.json but no longer found (remove them):\n" + \
        "\n".join(json.dumps(k) for k in gone)


def test_standard_corpus_is_exercised(standard: dict) -> None:
    fig = standard["figures"]
    # most programs run, most sites are reached, crossings happen, fixes are checked
    ok = [p for p, st in standard["status_of"].items() if st == "ok" and not p.startswith("generated/")]
    assert len(ok) >= 300
    assert fig["reached"] >= 600 and fig["concrete_crossing"] >= 100
    assert standard["fix_figures"]["programs_with_fixes"] >= 50
    assert standard["platform_runs"].get("tpu-v4", 0) >= 30


def test_baseline_entries_are_explained() -> None:
    for k in kn.load():
        assert set(k) >= {"file", "line", "kind", "why"} and k["kind"] in kn.FAILURES and len(k["why"]) > 20


# ---------------------------------------------------------------- generated projects

from . import generator as gen  # noqa: E402


def _seed_of(f: str) -> int | None:
    parts = f.split("/")
    return int(parts[1]) if len(parts) > 1 and parts[0] == "generated" and parts[1].isdigit() else None


def test_generated_sample_runs(sample: dict) -> None:
    """Every generated project runs on 8 CPU devices (moves that only multi-controller
    JAX refuses are read from the placements, not raised)."""
    gen_status = {p: st for p, st in sample["status_of"].items() if p.startswith("generated/")}
    assert len(gen_status) == len(SAMPLE) and set(gen_status.values()) == {"ok"}, sample["not_runnable"]
    assert sample["figures"]["reached"] >= 4 * len(SAMPLE)
    assert sample["figures"]["concrete_crossing"] >= len(SAMPLE) // 4


def test_generated_sample_matches_the_baseline(sample: dict) -> None:
    new, gone = kn.unexplained(sample["findings"], scope=lambda f: _seed_of(f) in SAMPLE)
    assert not new, "new oracle findings on generated projects (list them in tests/oracle/known.json " \
        "with the reason, after reading the project: python -m tests.oracle report --generated N --seed S):\n" + \
        "\n".join(f"{f['kind']} {f['path']}:{f['line']} {f['detail'][:300]}" for f in new)
    assert not gone, "\n".join(json.dumps(k) for k in gone)


def test_generator_is_deterministic() -> None:
    assert gen.generate(7) == gen.generate(7)
    assert gen.generate(7) != gen.generate(8)


# ---------------------------------------------------------------- the long run

def _long(which: str, tmp_path: Path) -> None:
    import os
    import time

    n = int(os.environ.get("ORACLE_LONG_N", "2000" if which == "dev" else "500"))
    # the development long run starts after the default sample; the held-out range is
    # never used while developing (generator.HELDOUT_START)
    start = int(os.environ.get("ORACLE_LONG_SEED", str(gen.DEV_START + 1000 if which == "dev" else gen.HELDOUT_START)))
    seeds = range(start, start + n)
    t0 = time.time()
    result = orc.oracle([gen.corpus(tmp_path / "generated", seeds)], tmp_path, workers=2)
    result["findings"] = orc.relative(result["findings"], tmp_path)
    result["seeds"] = [seeds.start, seeds.stop]
    result["wall_seconds"] = round(time.time() - t0, 1)
    out = Path(os.environ.get("ORACLE_REPORT_DIR", str(tmp_path))) / f"oracle-long-{which}.json"
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"\n{which} seeds {seeds.start}..{seeds.stop - 1} ({result['wall_seconds']} s), report {out}\n"
          + orc.text_report(result))
    new = [f for f in result["findings"] if f["kind"] in kn.FAILURES]
    assert result["program_status"].get("ok", 0) == n, result["not_runnable"][:20]
    assert not new, f"{len(new)} findings; see {out}:\n" + "\n".join(
        f"{f['kind']} {f['path']}:{f['line']} {f['detail'][:200]}" for f in new[:30])


@pytest.mark.oracle_long
def test_long_run_dev_seeds(tmp_path: Path) -> None:
    _long("dev", tmp_path)


@pytest.mark.oracle_long
def test_long_run_heldout_seeds(tmp_path: Path) -> None:
    _long("heldout", tmp_path)


@pytest.mark.oracle_long
def test_long_run_jax_test_suites(tmp_path: Path) -> None:
    """jax's own sharding tests (oracle.JAX_SUITES) run under the harness, compared with
    the static side on the same files. ORACLE_JAX_TESTS names a jax checkout's tests/."""
    import os
    import time

    where = os.environ.get("ORACLE_JAX_TESTS")
    if not where:
        pytest.skip("ORACLE_JAX_TESTS is not set (the tests/ directory of a jax checkout)")
    os.environ.setdefault("JAX_NUM_GENERATED_CASES", "1")  # read by jax's test_util in the child
    corpus = orc.jax_suites_corpus(Path(where))
    assert corpus.programs, f"no test file of oracle.JAX_SUITES in {where}"
    t0 = time.time()
    result = orc.oracle([corpus], tmp_path, workers=2, fixes=False)
    result["findings"] = [dict(f, path="jax/tests/" + f["path"])
                          for f in orc.relative(result["findings"], Path(where).resolve())]
    result["wall_seconds"] = round(time.time() - t0, 1)
    out = Path(os.environ.get("ORACLE_REPORT_DIR", str(tmp_path))) / "oracle-long-jax-tests.json"
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"\njax tests in {where} ({result['wall_seconds']} s), report {out}\n" + orc.text_report(result))
    # every file reached sites (a failing test case is a status 'error', not a failure here)
    assert result["figures"].get("reached", 0) > 0
    new, gone = kn.unexplained(result["findings"], scope=_jax_tests_file)
    assert not new, f"{len(new)} findings not in known.json; see {out}:\n" + "\n".join(
        f"{f['kind']} {f['path']}:{f['line']} {f['detail'][:200]}" for f in new[:30])
