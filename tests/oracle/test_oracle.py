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

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is a test dependency")


@pytest.fixture(scope="module")
def standard(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("oracle")
    corpora = [orc.fixture_corpus(), orc.example_corpus(work), orc.project_corpus()]
    result = orc.oracle(corpora, work, workers=2)
    result["findings"] = orc.relative(result["findings"], work)
    print("\n" + orc.text_report(result))
    return result


def _generated_file(f: str) -> bool:
    return f.startswith("generated/")


def test_standard_corpus_matches_the_baseline(standard: dict) -> None:
    new, gone = kn.unexplained(standard["findings"], scope=lambda f: not _generated_file(f))
    assert not new, "new oracle findings (fix them or list them in tests/oracle/known.json):\n" + \
        "\n".join(f"{f['kind']} {f['path']}:{f['line']} {f['detail'][:300]}" for f in new)
    assert not gone, "listed in tests/oracle/known.json but no longer found (remove them):\n" + \
        "\n".join(json.dumps(k) for k in gone)


def test_standard_corpus_is_exercised(standard: dict) -> None:
    fig = standard["figures"]
    # most programs run, most sites are reached, crossings happen, fixes are checked
    assert standard["program_status"].get("ok", 0) >= 300
    assert fig["reached"] >= 600 and fig["concrete_crossing"] >= 100
    assert standard["fix_figures"]["programs_with_fixes"] >= 50
    assert standard["platform_runs"].get("tpu-v4", 0) >= 30


def test_baseline_entries_are_explained() -> None:
    for k in kn.load():
        assert set(k) >= {"file", "line", "kind", "why"} and k["kind"] in kn.FAILURES and len(k["why"]) > 20
