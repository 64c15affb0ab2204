#!/usr/bin/env python
"""Lint a whole Python installation with the engine: the proof that it never crashes.

By default every .py file of the running interpreter's standard library and
site-packages (tens of thousands of files); or the installation of another
interpreter (--python), or given directories. Files are linted in parallel, the
way users get them (prefilter and gate on) or with --force through the whole engine.

Prints: files, crashes (engine exceptions, RSH002, or a worker process that died;
each with its traceback), files skipped as unparseable (RSH001) or unreadable
(SourceError), both by reason, diagnostics per code, wall time and peak memory.
Exit status 1 when anything crashed.

    python scripts/bulk_lint.py -j 8               # as users get it
    python scripts/bulk_lint.py -j 8 --force       # the whole engine on every file
    python scripts/bulk_lint.py --sample 300 --force DIR ...
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Iterable, Iterator

_ENGINE = None


@dataclass
class Outcome:
    path: str
    status: str  # ok, parse (RSH001), unreadable (SourceError), crash
    reason: str = ""
    codes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    detail: str = ""  # a crash's traceback


def lint_file(path: str, force: bool) -> Outcome:
    global _ENGINE
    from reshard_lint.engine.engine import INTERNAL_ERROR, PARSE_ERROR, Engine
    from reshard_lint.core.sources import SourceError, read_source

    if _ENGINE is None:
        _ENGINE = Engine()
    start = time.perf_counter()
    try:
        src = read_source(path)
    except SourceError as exc:
        return Outcome(path, "unreadable", exc.reason, seconds=time.perf_counter() - start)
    except BaseException:  # noqa: BLE001 - read_source must only ever raise SourceError
        return Outcome(path, "crash", "read_source raised", detail=traceback.format_exc())
    try:
        result = _ENGINE.lint_source(src.text, path, force=force)
    except BaseException:  # noqa: BLE001 - the point is to find every exception
        return Outcome(path, "crash", "engine raised", seconds=time.perf_counter() - start,
                       detail=traceback.format_exc())
    seconds = time.perf_counter() - start
    codes = collections.Counter(d.code for d in result.diagnostics)
    internal = [d for d in result.diagnostics if d.code == INTERNAL_ERROR]
    if internal:
        return Outcome(path, "crash", "RSH002", dict(codes), seconds, internal[0].message)
    if PARSE_ERROR in codes:
        return Outcome(path, "parse", result.error or "", dict(codes), seconds)
    return Outcome(path, "ok", "", dict(codes), seconds)


def _chunk(paths: list[str], force: bool) -> list[Outcome]:
    return [lint_file(p, force) for p in paths]


def installation_dirs(python: str) -> list[str]:
    code = ("import json, sys, sysconfig; p = sysconfig.get_paths(); "
            "print(json.dumps([p['stdlib'], p['platstdlib'], p['purelib'], p['platlib']] + "
            "[x for x in sys.path if x.endswith('-packages')]))")
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout
    seen: list[str] = []
    for d in json.loads(out):
        if os.path.isdir(d) and d not in seen:
            seen.append(d)
    return seen


def iter_py_files(dirs: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for top in dirs:
        for path in _walk(top):
            real = os.path.realpath(path)
            if real not in seen:  # site-packages often appear twice, via symlinks or sys.path
                seen.add(real)
                yield path


def _walk(top: str) -> Iterator[str]:
    if not os.path.isdir(top):
        yield top
        return
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(root, f)


def _isolate(paths: list[str], force: bool) -> list[Outcome]:
    """Files of a chunk whose worker died: one fresh process each, to name the culprit."""
    out: list[Outcome] = []
    for p in paths:
        proc = subprocess.run([sys.executable, __file__, "--one", p] + (["--force"] if force else []),
                              capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.strip():
            out.append(Outcome(**json.loads(proc.stdout.strip().splitlines()[-1])))
        else:
            out.append(Outcome(p, "crash", f"process died (exit status {proc.returncode})",
                               detail=proc.stderr[-4000:]))
    return out


def run(paths: list[str], jobs: int, force: bool, chunk: int = 40) -> list[Outcome]:
    results: list[Outcome] = []
    chunks = [paths[i:i + chunk] for i in range(0, len(paths), chunk)]
    if jobs <= 1:
        for c in chunks:
            results.extend(_chunk(c, force))
        return results
    pending = list(chunks)
    while pending:
        broken: list[list[str]] = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures: list[tuple[list[str], Future[list[Outcome]]]] = [
                (c, pool.submit(_chunk, c, force)) for c in pending]
            for c, fut in futures:
                try:
                    results.extend(fut.result())
                except BrokenProcessPool:
                    broken.append(c)
        pending = []
        for c in broken:
            results.extend(_isolate(c, force))
    return results


def _normalise(reason: str) -> str:
    # Group "at byte 1234" and "(line 5, column 3)" under one reason.
    return re.sub(r"\d+", "N", reason)[:160]


def report(results: list[Outcome], wall: float, force: bool) -> int:
    by_status = collections.Counter(r.status for r in results)
    codes: collections.Counter[str] = collections.Counter()
    for r in results:
        codes.update(r.codes)
    crashes = [r for r in results if r.status == "crash"]
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"mode: {'force (prefilter and gate bypassed)' if force else 'default (as users get it)'}")
    print(f"files: {len(results)}")
    print(f"analysed without error: {by_status['ok']}")
    print(f"crashes: {len(crashes)}")
    for r in crashes:
        print(f"  CRASH {r.path}: {r.reason}\n{r.detail}")
    print(f"skipped, could not parse (RSH001): {by_status['parse']}")
    parse_reasons = collections.Counter(_normalise(r.reason) for r in results if r.status == "parse")
    for reason, n in parse_reasons.most_common(15):
        print(f"  {n:6d}  {reason}")
    print(f"skipped, unreadable (SourceError): {by_status['unreadable']}")
    unreadable = collections.Counter(_normalise(r.reason) for r in results if r.status == "unreadable")
    for reason, n in unreadable.most_common():
        print(f"  {n:6d}  {reason}")
    print("diagnostics per code:")
    for code, n in sorted(codes.items()):
        print(f"  {code}: {n}")
    print(f"wall time: {wall:.1f} s")
    slow = sorted(results, key=lambda r: r.seconds, reverse=True)[:5]
    print("slowest files: " + ", ".join(f"{os.path.basename(r.path)} {r.seconds:.2f} s" for r in slow))
    print(f"peak memory (max RSS): this process {self_kb / 1024:.0f} MiB, "
          f"largest worker {child_kb / 1024:.0f} MiB")
    return 1 if crashes else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", help="directories or files (default: the installation of --python)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter whose stdlib and site-packages to lint")
    ap.add_argument("--force", action="store_true",
                    help="bypass the prefilter and gate: whole engine on every file")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sample", type=int, default=0, help="lint only this many files, chosen with --seed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(lint_file(args.one, args.force).__dict__))
        return 0
    dirs = args.dirs or installation_dirs(args.python)
    paths = list(iter_py_files(dirs))
    if args.sample and args.sample < len(paths):
        paths = sorted(random.Random(args.seed).sample(paths, args.sample))
    print(f"linting {len(paths)} files under: {', '.join(dirs)}", flush=True)
    start = time.perf_counter()
    results = run(paths, args.jobs, args.force)
    return report(results, time.perf_counter() - start, args.force)


if __name__ == "__main__":
    sys.exit(main())
