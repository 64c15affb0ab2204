"""The development set (../shared/devset/projects beside the repository) under the oracle:
each project's entry run in one process (the oracle's platform modes) and as a real
multi-controller job, judged against its labels and against ``reshard-lint coverage``.

``python -m tests.devset.devset [--processes 2] [NAME ...]`` prints the table and the
notes. ``RESHARD_LINT_DEVSET`` names the devset folder when it is not beside the
repository (a git worktree elsewhere).

Standard library only (the oracle's children import jax).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.oracle import compare as cmp
from tests.oracle import mc
from tests.oracle.run import ROOT, Program, run_concrete, run_static, with_platforms

from . import judge
from .labels import Project, load_project, load_projects


def devset_dir() -> Path:
    env = os.environ.get("RESHARD_LINT_DEVSET")
    return Path(env) if env else ROOT.parent / "shared" / "devset"


def copy_projects(src: Path, dst: Path, names: list[str] | None = None) -> list[Project]:
    """Each project copied under ``dst`` as a git repository of its own (the set's README:
    every project folder is its own root), its labels read from the copy."""
    out = []
    for proj in load_projects(src / "projects"):
        if names and proj.name not in names:
            continue
        target = dst / proj.name
        shutil.copytree(proj.root, target, ignore=shutil.ignore_patterns("__pycache__"))
        for p in target.rglob("*"):
            p.chmod(p.stat().st_mode | 0o200)  # the shared copy is read-only
        subprocess.run(["git", "init", "-q", str(target)], check=True)
        out.append(load_project(target))
    return out


@dataclass
class Result:
    project: Project
    seen: dict = field(default_factory=dict)  # item text -> bool (2-process runs)
    notes: list = field(default_factory=list)
    statuses: list = field(default_factory=list)  # per process of the real job
    figures: dict = field(default_factory=dict)  # mode -> judge.row_figures
    findings: dict = field(default_factory=dict)  # mode -> compare findings (failures)


def _own(coverage: dict, diags: list, root: Path) -> tuple[dict, list]:
    base = os.path.realpath(root) + os.sep
    sites = [s for s in coverage.get("site_list", []) if os.path.realpath(s["path"]).startswith(base)]
    return {"site_list": sites}, [d for d in diags if os.path.realpath(d["filename"]).startswith(base)]


def run(projects: list[Project], work: Path, processes: int = 2,
        one_process: bool = True) -> tuple[list, dict]:
    """Every project in each mode; returns the results and the seconds each part took."""
    times = {}
    progs = [Program(p.name, str(p.root), p.entry or "", timeout=60) for p in projects]
    t = time.monotonic()
    coverage, diags = run_static([str(p.root) for p in projects], cwd=str(work))
    times["static"] = time.monotonic() - t
    t = time.monotonic()
    runs = mc.run_jobs(progs, processes=processes)
    times[f"{processes} processes"] = time.monotonic() - t
    one: dict = {}
    if one_process:
        for prog, proj in zip(progs, projects):
            with_platforms([prog], proj.root)
        t = time.monotonic()
        one = run_concrete(progs, workers=2)
        times["one process"] = time.monotonic() - t
    out = []
    for prog, proj in zip(progs, projects):
        res = Result(proj)
        ev = judge.events(proj, runs[prog.id])
        res.seen = {i.text(): judge.seen(i, ev) for i in proj.expected}
        res.notes = judge.notes(proj, ev)
        res.statuses = [r["status"] for r in runs[prog.id]]
        cov, dg = _own(coverage, diags, proj.root)
        modes = {f"{processes} proc": mc.as_concrete({prog.id: runs[prog.id]}, processes)}
        if one_process:
            modes["1 proc"] = {plat: {prog.id: r[prog.id]} for plat, r in one.items() if prog.id in r}
        for mode, concrete in modes.items():
            result = cmp.compare(cov, dg, concrete)
            res.figures[mode] = judge.row_figures(result)
            res.findings[mode] = [f for f in result["findings"] if f["kind"] in cmp.FAILURES]
        out.append(res)
    return out, times


def table(results: list[Result]) -> str:
    lines = [judge.TABLE_HEADER, "|" + "---|" * 10]
    for r in results:
        p = r.project
        labels = "clean" if p.clean else str(len(p.expected))
        seen = "-" if p.clean else f"{sum(r.seen.values())}/{len(r.seen)}"
        status = "/".join(r.statuses)
        for mode, fig in r.figures.items():
            lines.append(judge.table_line(p.name, labels, seen, status, mode, fig))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--no-one-process", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    src = devset_dir()
    if not (src / "projects").is_dir():
        print(f"no development set at {src}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="devset-") as tmp:
        projects = copy_projects(src, Path(tmp), args.names)
        results, times = run(projects, Path(tmp), args.processes, not args.no_one_process)
        print(table(results))
        for r in results:
            for item, ok in r.seen.items():
                if not ok:
                    print(f"{r.project.name}: label not observed: {item}")
            for n in r.notes:
                print(f"{r.project.name}: note: {n}")
            for mode, fs in r.findings.items():
                for f in fs:
                    print(f"{r.project.name} [{mode}]: {f['kind']} {f['path']}:{f['line']} "
                          f"{f['detail'][:200]}")
        print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
