"""The parent side of the oracle: finds programs, runs them in child processes under
JAX (tests/oracle/child.py), and runs the static side (``reshard-lint coverage --sites``
and ``reshard-lint check``) over the same files.

This module imports only the standard library: the test session never imports jax.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PLATFORMS = ("cpu", "tpu-v4", "tpu-v5e", "gpu-scattered", "proc1of2")
# A program that uses a mesh builder is run again with the TPU device orders.
BUILDER_WORDS = ("make_mesh", "create_device_mesh")
# A program that asks which process it is, or for its local devices, is run again as
# process 1 of 2 simulated processes.
PROCESS_WORDS = ("local_devices", "process_index", "process_count")


def tool(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else name


def linter() -> tuple[list[str], dict]:
    """The reshard-lint command and its environment. ``ORACLE_RESHARD_LINT_SRC`` names a
    directory holding a ``reshard_lint`` package to use instead of the installed one (a
    snapshot of a commit, for a long run while the working tree changes under it)."""
    src = os.environ.get("ORACLE_RESHARD_LINT_SRC")
    env = dict(os.environ)
    if not src:
        return [tool("reshard-lint")], env
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    # -P: no current directory on sys.path, so that a run from the repository's root
    # (run_static's cwd) imports the snapshot, not the working tree's reshard_lint
    return [sys.executable, "-P", "-m", "reshard_lint"], env


@dataclass
class Program:
    """One program: a file run as __main__ (``file``), or a module of a project run as
    __main__ with the project root on sys.path (``module``)."""

    id: str
    root: str  # absolute
    file: str  # relative to root
    module: str | None = None
    timeout: int = 30
    platforms: tuple[str, ...] = ("cpu",)
    argv: tuple[str, ...] = ()  # command-line arguments (an absltest file's test filter)
    skip: tuple = ()  # strict-mode runs: [file, line] pairs run with strict mode suspended

    @property
    def path(self) -> str:
        return os.path.join(self.root, self.file)

    def job(self) -> dict:
        d = {"id": self.id, "root": self.root, "timeout": self.timeout}
        if self.argv:
            d["argv"] = list(self.argv)
        if self.skip:
            d["skip"] = [list(x) for x in self.skip]
        if self.module:
            d["module"] = self.module
        else:
            d["file"] = self.file
        return d


def _uses(path: str, words) -> bool:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(w in text for w in words)


def project_programs(root: Path, prefix: str = "") -> list[Program]:
    """Every module of a project (a directory with packages): each one run as __main__."""
    progs = []
    root = root.resolve()
    for py in sorted(root.rglob("*.py")):
        rel = py.relative_to(root)
        parts = list(rel.with_suffix("").parts)
        pkg_dirs = [root.joinpath(*parts[:i]) for i in range(1, len(parts))]
        if all((d / "__init__.py").exists() for d in pkg_dirs) and parts[-1] != "__init__":
            progs.append(Program(prefix + str(rel), str(root), str(rel), module=".".join(parts)))
        elif parts[-1] != "__init__" and not pkg_dirs:
            progs.append(Program(prefix + str(rel), str(root), str(rel)))
        elif parts[-1] != "__init__":
            # a script in a plain directory beside the packages: run as a file, the
            # project root on sys.path (run from the root)
            progs.append(Program(prefix + str(rel), str(root), str(rel)))
    return progs


def with_platforms(progs: list[Program], project_root: Path | None = None) -> list[Program]:
    for p in progs:
        files = [p.path] if project_root is None else [str(f) for f in project_root.rglob("*.py")]
        plats = ["cpu"]
        if any(_uses(f, BUILDER_WORDS) for f in files):
            plats += ["tpu-v4", "tpu-v5e"]
            # GPU builders sort by id; the program's own d.id would still read the CPU
            # ids, so programs that read ids do not run in this mode
            if not any(_uses(f, (".id",)) for f in files):
                plats.append("gpu-scattered")
        if any(_uses(f, PROCESS_WORDS) for f in files):
            plats.append("proc1of2")
        p.platforms = tuple(plats)
    return progs


# ---------------------------------------------------------------- the concrete side

def _run_child(items: list[tuple[str, Program]], timeout: float,
               module: str = "tests.oracle.child") -> dict[tuple[str, str], dict]:
    """Run (platform, program) items in one child process (``python -m module JOB OUT``:
    the recording child, or tests/oracle/strict_child.py), in order; a program that
    kills the child is recorded as a crash and the rest continue in a new child."""
    results: dict[tuple[str, str], dict] = {}
    todo = list(items)
    while todo:
        with tempfile.TemporaryDirectory() as tmp:
            job, out = Path(tmp) / "job.json", Path(tmp) / "out.jsonl"
            job.write_text(json.dumps({"programs": [dict(p.job(), platform=plat) for plat, p in todo]}))
            env = dict(os.environ)
            env.pop("XLA_FLAGS", None)
            env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
            flags = []
            if module != "tests.oracle.child" and os.environ.get("ORACLE_RESHARD_LINT_SRC"):
                # strict mode from the snapshot: first on the path, and no current directory
                # (the repository's root) in front of it (-P)
                env["PYTHONPATH"] = os.environ["ORACLE_RESHARD_LINT_SRC"] + os.pathsep + env["PYTHONPATH"]
                flags = ["-P"]
            budget = timeout + sum(p.timeout for _, p in todo)
            try:
                proc = subprocess.run([sys.executable, *flags, "-m", module, str(job), str(out)],
                                      cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=budget)
                rc, tail = proc.returncode, proc.stderr[-2000:]
            except subprocess.TimeoutExpired as e:
                rc, tail = "timeout", str(e.stderr or "")[-2000:]
            started = None
            if out.exists():
                for line in out.read_text().splitlines():
                    rec = json.loads(line)
                    if rec.get("started"):
                        started = (rec["platform"], rec["id"])
                    else:
                        results[(rec["platform"], rec["id"])] = rec
                        started = None
        rest = [(plat, p) for plat, p in todo if (plat, p.id) not in results]
        if not rest:
            break
        # the child died in `started` (or before the first program)
        bad = started or (rest[0][0], rest[0][1].id)
        results[bad] = {"id": bad[1], "status": "crash", "error": f"child exited {rc}: {tail[-300:]}",
                        "error_at": None, "sites": [], "platform": bad[0]}
        todo = [(plat, p) for plat, p in rest if (plat, p.id) != bad]
    return results


def run_concrete(progs: Sequence[Program], workers: int = 2, timeout: float = 120.0,
                 platforms: Iterable[str] = PLATFORMS,
                 module: str = "tests.oracle.child") -> dict[str, dict[str, dict]]:
    """{platform: {program id: result}}: every program on each of its platforms, split
    over ``workers`` children (each child switches platform mode per program)."""
    platforms = tuple(platforms)
    items = [(plat, p) for p in progs for plat in p.platforms if plat in platforms]
    n = max(1, min(workers, len(items) // 8 or 1))
    chunks = [items[i::n] for i in range(n)]
    out: dict[str, dict[str, dict]] = {p: {} for p in platforms}
    with ThreadPoolExecutor(max_workers=n) as ex:
        for res in ex.map(lambda c: _run_child(c, timeout, module), chunks):
            for (plat, pid), rec in res.items():
                out[plat][pid] = rec
    return out


# ---------------------------------------------------------------- the static side

def run_static(paths: Sequence[str], cwd: str, jobs: int = 2) -> tuple[dict, list]:
    """``coverage --sites`` JSON and ``check`` JSON diagnostics, paths made absolute."""
    cmd, env = linter()
    cov = subprocess.run([*cmd, "coverage", "--sites", "--format", "json", "--isolated",
                          "-j", str(jobs), *paths], cwd=cwd, capture_output=True, text=True, env=env)
    if cov.returncode != 0:
        raise RuntimeError(f"coverage failed: {cov.stderr[-2000:]}")
    coverage = json.loads(cov.stdout)
    for s in coverage.get("site_list", []):
        s["path"] = str((Path(cwd) / s["path"]).resolve())
    chk = subprocess.run([*cmd, "check", "--format", "json", "--isolated", "--exit-zero",
                          "--no-cache", "-j", str(jobs), *paths], cwd=cwd, capture_output=True, text=True, env=env)
    if chk.returncode != 0:
        raise RuntimeError(f"check failed: {chk.stderr[-2000:]}")
    diags = json.loads(chk.stdout or "[]")
    for d in diags:
        d["filename"] = str((Path(cwd) / d["filename"]).resolve())
    return coverage, diags


def apply_fixes(root: str, jobs: int = 1) -> tuple[int, str]:
    """``reshard-lint check --fix --unsafe-fixes`` on the directory ``root`` (a copy):
    (exit status, output); with --exit-zero anything but 0 is the tool failing."""
    cmd, env = linter()
    proc = subprocess.run([*cmd, "check", "--fix", "--unsafe-fixes", "--isolated",
                           "--exit-zero", "--no-cache", "-q", "-j", str(jobs), "."], cwd=root,
                          capture_output=True, text=True, env=env)
    return proc.returncode, proc.stdout + proc.stderr
