"""Public JAX projects' own tests under the oracle (issue 54 item 3).

For each project of tests/realsuites/projects.py: its sdist at the pinned version is
downloaded from PyPI into a cache directory (``RESHARD_LINT_REALSUITES_CACHE``, default
``~/.cache/reshard-lint/realsuites``) and unpacked there, its pinned dependencies are
installed beside it (``pip install --no-deps --target``), and each selected test file
runs from its own entry point, unchanged: a file with a ``__main__`` block (absltest,
unittest) runs as ``__main__``, any other under pytest (``python -m pytest FILE``), in
the oracle's recording child (tests/oracle/child.py) on 8 CPU devices, one child per
file, the sdist's root first on ``sys.path`` so that the tests import the project's own
code from the sdist. Every site in the sdist (the tests and the project's package) is
recorded and compared with ``reshard-lint coverage`` and ``check`` on the whole sdist
(tests/oracle/compare.py). ``--processes 2`` also runs the files that name a
multi-process API (tests/oracle/mc.MULTI_WORDS) as real 2-process jobs.

``python -m tests.realsuites.realsuites [--held-out] [--processes N] [--json OUT] [NAME ...]``

Standard library only (the children import jax).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.oracle import compare as cmp
from tests.oracle import mc
from tests.oracle.run import Program, run_concrete, run_static

from .projects import PROJECTS, Project, by_name

FETCHES = ("device_get", "np.asarray", "np.array", "tolist", "item", "process_allgather")


def cache_dir() -> Path:
    env = os.environ.get("RESHARD_LINT_REALSUITES_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "reshard-lint" / "realsuites").resolve()


class Unavailable(Exception):
    """The pinned sdist or a dependency could not be downloaded (no network to PyPI)."""


def _pip(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise Unavailable(f"pip {' '.join(args[:2])} ... failed: {proc.stderr.strip()[-600:]}")


def fetch(project: Project) -> tuple[Path, Path]:
    """(the unpacked sdist, its dependencies' directory), downloading what the cache lacks."""
    base = cache_dir()
    # the dependencies' directory is named by their list too: a change of pins installs anew
    pins = hashlib.sha256("\n".join(project.deps).encode()).hexdigest()[:10]
    src, deps = base / "src" / project.key, base / "deps" / f"{project.key}-{pins}"
    if not (src / ".complete").exists():
        sdists = base / "sdists"
        sdists.mkdir(parents=True, exist_ok=True)
        _pip("download", "--no-deps", "--no-binary", ":all:", f"{project.name}=={project.version}",
             "-d", str(sdists))
        stem = project.name.replace("-", "_").lower()
        found = [p for p in sdists.glob("*.tar.gz")
                 if p.name.lower().replace("-", "_").startswith(f"{stem}_{project.version}.tar")]
        if not found:
            raise Unavailable(f"no sdist of {project.key} in {sdists}")
        if src.exists():
            shutil.rmtree(src)
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            with tarfile.open(found[0]) as tf:
                tf.extractall(tmp, filter="data")
            (top,) = list(Path(tmp).iterdir())
            src.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(top), str(src))
        (src / ".complete").write_text(found[0].name + "\n")
    if project.deps and not (deps / ".complete").exists():
        if deps.exists():
            shutil.rmtree(deps)
        _pip("install", "--no-deps", "--no-compile", "-q", "--target", str(deps), *project.deps)
        (deps / ".complete").write_text("\n".join(project.deps) + "\n")
    return src, deps


def sdist_sha256(src: Path) -> str:
    """The sha256 of the sdist unpacked at ``src`` (its name is in ``.complete``): what
    identifies the code run when the metadata names no commit."""
    name = (src / ".complete").read_text().strip()
    return hashlib.sha256((cache_dir() / "sdists" / name).read_bytes()).hexdigest()


def sdist_commit(src: Path) -> str:
    """The source commit the sdist's metadata names, if any (setuptools-scm's
    ``.git_archival.txt``, a ``PKG-INFO`` header), else ''."""
    for name in (".git_archival.txt", "PKG-INFO"):
        p = src / name
        if p.exists():
            for line in p.read_text(errors="replace").splitlines():
                low = line.lower()
                if low.startswith(("node:", "commit:", "git-commit:")) and "$format" not in low:
                    return line.split(":", 1)[1].strip()
    return ""


@dataclass
class SuiteProgram(Program):
    """A test file of a project: its dependencies' directory on ``sys.path`` too."""

    path_extra: tuple[str, ...] = ()

    def job(self) -> dict:
        d = super().job()
        d["path"] = list(self.path_extra)
        return d


def programs(project: Project, src: Path, deps: Path) -> list[SuiteProgram]:
    out = []
    extra: tuple[str, ...] = (str(deps),) if project.deps else ()
    if any((src / "src").glob("*/__init__.py")):  # a src layout: its packages live in src/
        extra += (str(src / "src"),)
    for rel in project.selected(src):
        text = (src / rel).read_text(encoding="utf-8", errors="replace")
        pid = f"{project.name}/{rel}"
        if "__main__" in text:
            out.append(SuiteProgram(pid, str(src), rel, timeout=project.timeout, path_extra=extra))
        else:
            argv = (rel, "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly")
            out.append(SuiteProgram(pid, str(src), rel, module="pytest", timeout=project.timeout,
                                    argv=argv, path_extra=extra))
    return out


@dataclass
class Outcome:
    project: Project
    src: Path | None = None
    commit: str = ""
    sha256: str = ""
    unavailable: str = ""
    statuses: dict = field(default_factory=dict)  # program id -> status (one process)
    errors: dict = field(default_factory=dict)  # program id -> error text
    mc_statuses: dict = field(default_factory=dict)  # program id -> [status per process]
    mc_errors: dict = field(default_factory=dict)  # program id -> [error of each process that failed]
    figures: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)
    compare: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)


def _site_of(coverage: dict) -> dict:
    out: dict = {}
    for s in coverage.get("site_list", []):
        out.setdefault((s["path"], s["line"]), []).append(s)
    return out


def figures(coverage: dict, concrete: dict) -> dict:
    """Per concrete site (file, line, column, API) the runs reached: the static site it
    is (compare.py's matching: the same position and API kind, or the one call of that
    API on the line), its verdict, and why an unresolved one is; a site with no static
    site is 'not a site' (by API, fetches and eager operators apart)."""
    reached: dict = {}
    for plat, results in concrete.items():
        if plat in cmp.PARTIAL:
            continue
        for res in results.values():
            for rec in res.get("sites", []):
                k = (rec["path"], rec["line"], rec["col"], rec["api"])
                r = reached.setdefault(k, {"crossing": False})
                for p in rec.get("pairs", []):
                    if cmp.relation(p["src"], p["dst"]) in cmp.CROSSING:
                        r["crossing"] = True
    by_line = _site_of(coverage)
    out: Counter = Counter()
    unresolved: Counter = Counter()
    not_site: Counter = Counter()
    listed = []  # every reached site: where, what, the static verdict (or none), crossing
    for (path, line, col, api), r in reached.items():
        cands = [s for s in by_line.get((path, line), []) if api in cmp.KIND_APIS.get(s["kind"], ())]
        exact = [s for s in cands if s["col"] == col]
        site = exact[0] if exact else (cands[0] if len({s["col"] for s in cands}) == 1 else None)
        group = _group(api)
        out[f"reached_{group}"] += 1
        listed.append({"path": path, "line": line, "col": col, "api": api, "crossing": r["crossing"],
                       "verdict": site["verdict"] if site else "not a site",
                       "detail": site["detail"] if site else ""})
        if r["crossing"]:
            out[f"crossing_{group}"] += 1
        if site is None:
            out[f"not_a_site_{group}"] += 1
            not_site[api] += 1
            continue
        out[f"site_{group}"] += 1
        out[f"verdict_{site['verdict']}"] += 1
        if site["verdict"] == "unresolved":
            unresolved[site["detail"]] += 1
    return {"counts": dict(out), "unresolved_by_reason": dict(unresolved.most_common()),
            "not_a_site_by_api": dict(not_site.most_common()), "sites": sorted(listed, key=_where)}


def _where(site: dict) -> tuple:
    return (site["path"], site["line"], site["col"], site["api"])


GROUPS = ("placement", "fetch", "binop", "jit-plain")


def _group(api: str) -> str:
    """Placements (puts, jitted calls with shardings, constraints, assembly, default
    devices), fetches, eager operators between arrays, and jitted calls without shardings
    that raised (the child records those only when they raise)."""
    if api in FETCHES:
        return "fetch"
    return api if api in ("binop", "jit-plain") else "placement"


def run_project(project: Project, processes: int = 0, log=print, files: tuple[str, ...] = ()) -> Outcome:
    """``files``: only the test files whose path holds one of these strings."""
    res = Outcome(project)
    try:
        src, deps = fetch(project)
    except (Unavailable, subprocess.TimeoutExpired, OSError) as e:
        res.unavailable = str(e)
        return res
    res.src, res.commit, res.sha256 = src, sdist_commit(src), sdist_sha256(src)
    progs = [p for p in programs(project, src, deps) if not files or any(f in p.file for f in files)]
    t = time.monotonic()
    coverage, diags = run_static([str(src)], cwd=str(src))
    res.seconds["static"] = round(time.monotonic() - t, 1)
    t = time.monotonic()
    one: dict = {}
    for prog in progs:  # one child per file, serially: a project's import registers pytrees once
        got = run_concrete([prog], workers=1, timeout=60, platforms=("cpu",))
        one.update(got["cpu"])
        rec = one[prog.id]
        res.statuses[prog.id] = rec["status"]
        res.errors[prog.id] = rec.get("error", "")
        log(f"  {prog.id}: {rec['status']} {len(rec.get('sites', []))} site records "
            f"{rec.get('seconds', '')}s {rec.get('error', '')[:120]}")
    res.seconds["one process"] = round(time.monotonic() - t, 1)
    concrete = {"cpu": one}
    multi = [p for p in progs if _multi(src / p.file)] if processes else []
    if multi:
        t = time.monotonic()
        runs = mc.run_jobs(multi, processes=processes, timeout=float(project.timeout))
        concrete.update(mc.as_concrete(runs, processes))
        res.mc_statuses = {pid: [r["status"] for r in recs] for pid, recs in runs.items()}
        res.mc_errors = {pid: [f"{r.get('error', '')[:200]} at {r.get('error_at')}" for r in recs
                               if r["status"] != "ok"] for pid, recs in runs.items()}
        res.seconds[f"{processes} processes"] = round(time.monotonic() - t, 1)
    result = cmp.compare(coverage, diags, concrete)
    res.compare = result
    res.findings = [f for f in result["findings"] if f["kind"] in cmp.FAILURES]
    res.figures = figures(coverage, concrete)
    res.figures["static"] = {k: v for k, v in result["figures"].items()
                             if k in ("sites", "reached", "crossing_reached", "misses", "concrete_crossing")}
    res.figures["misses_by_reason"] = result["misses_by_reason"]
    return res


def _multi(path: Path) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return any(w in text for w in mc.MULTI_WORDS)


TABLE_HEADER = ("| project | version | files (ok/all) | sites reached (placement / fetch / eager op / "
                "raising plain jit) | "
                "static site | host_data | resolved (not host) | unresolved | not a site | crossing in a run "
                "| wrong | misses (crossing, unresolved) |")


def table_line(o: Outcome) -> str:
    p = o.project
    if o.unavailable:
        return f"| {p.name} | {p.version} | not run: {o.unavailable[:80]} |" + " |" * 9
    c = o.figures["counts"]
    reached = sum(c.get(f"reached_{g}", 0) for g in GROUPS)
    site = sum(c.get(f"site_{g}", 0) for g in GROUPS)
    host = c.get("verdict_host_data", 0)
    resolved = sum(c.get(f"verdict_{v}", 0) for v in ("crossing", "same_devices", "same_pieces"))
    unres = c.get("verdict_unresolved", 0)
    notsite = reached - site
    crossing = sum(c.get(f"crossing_{g}", 0) for g in GROUPS)
    ok = sum(1 for s in o.statuses.values() if s == "ok")
    parts = " / ".join(str(c.get(f"reached_{g}", 0)) for g in GROUPS)
    return (f"| {p.name} | {p.version} | {ok}/{len(o.statuses)} | {reached} ({parts}) | {site} | {host} "
            f"| {resolved} | {unres} | {notsite} | {crossing} | {len(o.findings)} "
            f"| {o.figures['static'].get('misses', 0)} |")


def report(outcomes: list[Outcome]) -> str:
    lines = [TABLE_HEADER, "|" + "---|" * 12]
    lines += [table_line(o) for o in outcomes]
    for o in outcomes:
        if o.unavailable:
            continue
        lines.append(f"\n{o.project.key} (sdist sha256 {o.sha256[:16]}, commit: "
                     f"{o.commit or 'not in its metadata'}; seconds: {o.seconds})")
        for pid, st in o.statuses.items():
            err = f": {o.errors[pid][:150]}" if st != "ok" else ""
            mcs = f" [2 processes: {'/'.join(o.mc_statuses[pid])}]" if pid in o.mc_statuses else ""
            lines.append(f"  {pid}: {st}{err}{mcs}")
            base = str(o.src) + os.sep
            lines += [f"    2 processes: {e.replace(base, '')}" for e in o.mc_errors.get(pid, [])]
        base = str(o.src) + os.sep
        for why, n in o.figures["unresolved_by_reason"].items():
            lines.append(f"  unresolved x{n}: {why}")
        for api, n in o.figures["not_a_site_by_api"].items():
            lines.append(f"  not a site x{n}: {api}")
        for st in o.figures["sites"]:
            if st["api"] != "binop" and st["verdict"] in ("unresolved", "not a site") or st["crossing"]:
                lines.append(f"    {st['path'].replace(base, '')}:{st['line']}:{st['col']} {st['api']} "
                             f"{st['verdict']}{' CROSSING' if st['crossing'] else ''} {st['detail']}")
        for r in o.compare.get("raised_at_resolved_site", []):
            lines.append(f"  JAX raised at a resolved site: {r.replace(base, '')[:250]}")
        for f in o.findings:
            lines.append(f"  FINDING {f['kind']} {f['path'].replace(base, '')}:{f['line']}:{f['col']} "
                         f"{f['codes']} {f['detail'][:300]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--held-out", action="store_true",
                    help="the three held-out projects (run once, at the end)")
    ap.add_argument("--processes", type=int, default=0, help="also real multi-controller jobs of N processes")
    ap.add_argument("--files", nargs="*", default=(),
                    help="only the test files whose path holds one of these")
    ap.add_argument("--json", help="write the outcomes (figures, findings, statuses) here")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    chosen = [by_name(n) for n in args.names] if args.names else \
        [p for p in PROJECTS if p.held_out == args.held_out]
    outcomes = []
    for p in chosen:
        print(f"{p.key}:", flush=True)
        outcomes.append(run_project(p, args.processes, log=lambda s: print(s, flush=True),
                                    files=tuple(args.files)))
    print(report(outcomes))
    if args.json:
        Path(args.json).write_text(json.dumps([{
            "project": o.project.key, "commit": o.commit,
            "sdist_sha256": o.sha256, "unavailable": o.unavailable,
            "statuses": o.statuses, "errors": o.errors, "mc_statuses": o.mc_statuses,
            "mc_errors": o.mc_errors, "figures": o.figures,
            "findings": o.findings, "seconds": o.seconds,
            "missed_sites": o.compare.get("missed_sites", []),
            "raised_at_resolved_site": o.compare.get("raised_at_resolved_site", []),
        } for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
