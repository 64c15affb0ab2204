"""bench/run.py still runs end to end and still reports what docs/performance.md promises.

A tiny generated corpus and this interpreter's tools (no bench/.venv, no peers), so it
takes seconds. Nothing here depends on how fast anything was.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "bench" / "run.py"

SNIPPET = textwrap.dedent("""
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


    def shard(x, axis: str = "data"):
        mesh = Mesh(np.array(jax.devices()), (axis,))
        return jax.device_put(x, NamedSharding(mesh, P(axis)))
    """)


def _corpus(root: Path) -> Path:
    for tree, count in (("alpha", 3), ("beta", 2)):
        pkg = root / tree / "pkg"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        for i in range(count):
            (pkg / f"mod{i}.py").write_text(SNIPPET + f"\n\nUNUSED_{i} = {i}\nimport os  # F401\n")
    return root


def test_quick_run_reports_tables_and_json(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    out_json = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            str(RUN),
            "--quick",
            "--no-venv",
            "--no-peers",
            "--no-examples",
            "--scales",
            "1,2",
            "--corpus",
            str(corpus),
            "--json",
            str(out_json),
            "--timeout",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for heading in ("Trees", "Measurements", "Targets", f"results JSON: {out_json}"):
        assert heading in done.stdout, heading

    data = json.loads(out_json.read_text())
    for key in ("machine", "versions", "settings", "trees", "results", "targets", "diagnostics", "table"):
        assert key in data, key
    assert data["settings"]["repeat"] == 1 and data["settings"]["peers"] == []
    assert data["machine"]["nproc"] >= 1

    trees = {t["name"]: t for t in data["trees"]}
    assert {"alpha", "beta", "scale-1x", "scale-2x"} <= set(trees)
    assert trees["alpha"]["files"] == 4 and trees["beta"]["files"] == 3
    assert trees["alpha"]["contains"]["NamedSharding"] == 3
    # The scale trees are whole copies of the smallest tree.
    assert trees["scale-2x"]["files"] == 2 * trees["scale-1x"]["files"]
    assert trees["scale-2x"]["lines"] == 2 * trees["scale-1x"]["lines"]

    results = {(r["tree"], r["command"]): r for r in data["results"]}
    base = results[("alpha", "flake8_j2_F")]
    assert base["status"] == "ok" and len(base["walls_s"]) == 1
    assert base["median_wall_s"] > 0 and base["files_per_s"] > 0 and base["lines_per_s"] > 0
    assert base["peak_mb"] >= base["peak_proc_mb"] > 0
    assert base["ratio_vs_flake8_j2_F"] == 1.0
    assert ("alpha", "flake8_j1_F") in results
    assert not any(r["role"] == "peer" for r in data["results"])

    for target in data["targets"]:
        assert target["status"] in {"MET", "NOT MET", "N/A"}, target
        assert set(target) >= {"name", "measured", "limit", "unit", "status"}
    names = [t["name"] for t in data["targets"]]
    assert any("flake8 -j2 F,RSH / F" in n for n in names)
    assert any("linear:" in n for n in names)

    # Whatever the engine's state, the F diagnostics seen must be the planted F401s.
    diags = data["diagnostics"].get("alpha", {})
    if "F_count" in diags:
        assert diags["F_count"] == 3
