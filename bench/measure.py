"""Measuring one command: wall and CPU time, peak memory of its process tree; running
every command on every tree, interleaved; and reading the diagnostics they print.

Every command runs as a child process in its own session. Wall time is the child's
lifetime measured here. Peak memory is taken two ways, because flake8 -j2 is several
processes: "peak MB" is the largest sum of RSS over the child's whole process tree,
sampled from /proc every 20 ms (shared copy-on-write pages of forked workers count once
per process, as psutil would count them), and never less than ru_maxrss from wait4();
"proc MB" is that ru_maxrss alone (the largest single process of the tree, exact).
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tools import Command
from trees import Tree

DIAG_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+):?\s*(?P<code>[A-Z]+\d+)\b")
SAMPLE_INTERVAL_S = 0.02
SHORT_TREE_S = 5.0  # see run_all
AGREEMENT_COMMANDS = ("flake8_j2_F", "flake8_j2_F_RSH", "rsh_cold", "rsh_warm")


# ----------------------------------------------------------------------------- processes


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
        except OSError:
            continue
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, IndexError, ValueError):
        return 0


class TreeSampler(threading.Thread):
    """Largest sum of RSS over a process and all its descendants while it runs."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_kb = 0
        self.max_procs = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            pids, frontier = [], [self.root]
            while frontier:
                pid = frontier.pop()
                pids.append(pid)
                frontier.extend(_children(pid))
            total = sum(_rss_kb(p) for p in pids)
            self.peak_kb = max(self.peak_kb, total)
            self.max_procs = max(self.max_procs, len(pids))
            self._stop_event.wait(SAMPLE_INTERVAL_S)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


@dataclass
class Sample:
    wall_s: float
    rc: int
    peak_tree_kb: int
    peak_proc_kb: int
    max_procs: int
    timed_out: bool
    cpu_s: float = 0.0
    stdout: str = ""
    stderr_tail: str = ""


def _child_env() -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE (set on some CI machines and sandboxes) would make every
    # run compile the tools' modules again; users' installs have their .pyc files, and
    # the untimed warm-up run writes them here.
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> Sample:
    env = env if env is not None else _child_env()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )
        sampler = TreeSampler(proc.pid)
        sampler.start()
        timed_out = threading.Event()

        def _kill() -> None:
            timed_out.set()
            _killpg(proc.pid)

        timer = threading.Timer(timeout, _kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): the child's session must not outlive us.
            _killpg(proc.pid)
            timer.cancel()
            raise
        wall = time.perf_counter() - start
        timer.cancel()
        sampler.stop()
        # Pool workers or a fixit child that outlive their parent are ours to end.
        _killpg(proc.pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    peak_proc = int(usage.ru_maxrss)  # KiB on Linux
    return Sample(
        wall_s=wall,
        rc=proc.returncode,
        peak_tree_kb=max(sampler.peak_kb, peak_proc),
        peak_proc_kb=peak_proc,
        max_procs=sampler.max_procs,
        timed_out=timed_out.is_set(),
        cpu_s=usage.ru_utime + usage.ru_stime,
        stdout=stdout,
        stderr_tail=stderr[-2000:],
    )


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ----------------------------------------------------------------------------- diagnostics


def parse_diags(stdout: str, prefix: str | None) -> set[tuple[str, int, int, str]]:
    out: set[tuple[str, int, int, str]] = set()
    for line in stdout.splitlines():
        m = DIAG_RE.match(line.strip())
        if not m:
            continue
        code = m.group("code")
        if prefix is not None and not code.startswith(prefix):
            continue
        out.add((os.path.normpath(m.group("path")), int(m.group("line")), int(m.group("col")), code))
    return out


def compare_diags(tree: Tree, first: dict[str, Sample]) -> dict[str, Any] | None:
    """Does adding RSH to flake8 lose nothing, and do flake8 and the CLI agree?"""
    rec: dict[str, Any] = {}
    base, ours = first.get("flake8_j2_F"), first.get("flake8_j2_F_RSH")
    if base and ours:
        f_base, f_ours = parse_diags(base.stdout, "F"), parse_diags(ours.stdout, "F")
        rec["F_count"] = len(f_base)
        rec["F_equal_with_RSH_on"] = f_base == f_ours
    cli_cold, cli_warm = first.get("rsh_cold"), first.get("rsh_warm")
    if ours:
        rec["RSH_flake8_count"] = len(parse_diags(ours.stdout, "RSH"))
    if cli_cold:
        cold = parse_diags(cli_cold.stdout, "RSH")
        rec["RSH_cli_count"] = len(cold)
        codes: dict[str, int] = {}
        for d in cold:
            codes[d[3]] = codes.get(d[3], 0) + 1
        rec["RSH_cli_by_code"] = dict(sorted(codes.items()))
        if ours:
            plugin = parse_diags(ours.stdout, "RSH")
            rec["RSH_flake8_equals_cli"] = plugin == cold
            rec["only_in_flake8"] = sorted(":".join(map(str, d)) for d in plugin - cold)[:10]
            rec["only_in_cli"] = sorted(":".join(map(str, d)) for d in cold - plugin)[:10]
        if cli_warm:
            rec["RSH_warm_equals_cold"] = parse_diags(cli_warm.stdout, "RSH") == cold
    return rec or None


# ----------------------------------------------------------------------------- running


@dataclass
class Result:
    tree: str
    command: str
    label: str
    role: str
    walls_s: list[float] = field(default_factory=list)
    # user+sys of the whole process tree: less sensitive than wall time to other load
    # on the machine, and the number to look at when asking where time goes.
    cpus_s: list[float] = field(default_factory=list)
    median_cpu_s: float | None = None
    peak_mb: float = 0.0
    peak_proc_mb: float = 0.0
    max_procs: int = 0
    status: str = "ok"  # ok | error | timeout
    detail: str = ""
    median_wall_s: float | None = None
    files_per_s: float | None = None
    lines_per_s: float | None = None
    ratio_vs_flake8_j2_F: float | None = None
    ratio_vs_ruff: float | None = None


def run_all(
    trees: list[Tree],
    commands: list[Command],
    repeat: int,
    peer_repeat: int,
    timeout: float,
    peer_timeout: float,
    log: Callable[[str], None],
    short_repeat: int = 0,
) -> tuple[dict[tuple[str, str], Result], dict[str, Any]]:
    """Every command on every tree, interleaved, ``repeat`` times; trees whose first
    flake8 -j2 F run took under SHORT_TREE_S get ``short_repeat`` rounds, because on this
    2-core machine a 3 s run varies by +-15% between repetitions and a ratio of medians
    of three moves with it (the project tree gave 1.00x-1.35x in one run)."""
    results: dict[tuple[str, str], Result] = {}
    first: dict[str, dict[str, Sample]] = {t.name: {} for t in trees}
    primed: set[str] = set()
    short: set[str] = set()
    for rep in range(max(repeat, short_repeat)):
        if rep == 1:
            short = {name for name, got in first.items()
                     if "flake8_j2_F" in got and got["flake8_j2_F"].wall_s < SHORT_TREE_S}
        for tree in trees:
            if rep >= repeat and tree.name not in short:
                continue
            rounds = max(repeat, short_repeat) if tree.name in short else repeat
            for cmd in commands:
                if tree.scale and not cmd.on_scale_trees:
                    continue
                if cmd.role == "peer" and rep >= peer_repeat:
                    continue
                if tree.check_only and (rep > 0 or cmd.key not in AGREEMENT_COMMANDS):
                    continue
                if tree.commands and cmd.key not in tree.commands:
                    continue
                res = results.setdefault(
                    (tree.name, cmd.key), Result(tree.name, cmd.key, cmd.label, cmd.role)
                )
                if res.status != "ok":
                    continue  # a command that failed or timed out once is not retried
                if cmd.key == "rsh_warm" and "--cache-dir" not in cmd.argv(tree) and tree.name not in primed:
                    measure(cmd.argv(tree), tree.path, timeout)
                    primed.add(tree.name)
                if cmd.prepare:
                    cmd.prepare(tree)
                limit = peer_timeout if cmd.role == "peer" else timeout
                sample = measure(cmd.argv(tree), tree.path, limit)
                ok_rcs = {0, 1} if cmd.key != "fixit" else {0, 1, 2}
                if sample.timed_out:
                    res.status, res.detail = "timeout", f"> {limit:.0f} s"
                elif sample.rc not in ok_rcs or "Traceback (most recent call last)" in sample.stderr_tail:
                    res.status = "error"
                    res.detail = (
                        f"rc={sample.rc}: " + (sample.stderr_tail.strip().splitlines() or [""])[-1][:200]
                    )
                res.walls_s.append(round(sample.wall_s, 4))
                res.cpus_s.append(round(sample.cpu_s, 4))
                res.peak_mb = max(res.peak_mb, round(sample.peak_tree_kb / 1024, 1))
                res.peak_proc_mb = max(res.peak_proc_mb, round(sample.peak_proc_kb / 1024, 1))
                res.max_procs = max(res.max_procs, sample.max_procs)
                if rep == 0:
                    first[tree.name][cmd.key] = sample
                log(
                    f"rep {rep + 1}/{rounds} {tree.name:<10} {cmd.key:<16} {sample.wall_s:8.2f} s "
                    f"{sample.peak_tree_kb / 1024:8.1f} MB rc={sample.rc}"
                    + (f" [{res.status}]" if res.status != "ok" else "")
                )
    by_tree = {t.name: t for t in trees}
    for (tname, _key), res in results.items():
        if res.walls_s and res.status == "ok":
            res.median_wall_s = round(statistics.median(res.walls_s), 4)
            res.median_cpu_s = round(statistics.median(res.cpus_s), 4)
            res.files_per_s = round(by_tree[tname].files / res.median_wall_s, 1)
            res.lines_per_s = round(by_tree[tname].lines / res.median_wall_s, 1)
    for (tname, key), res in results.items():
        base = results.get((tname, "flake8_j2_F"))
        if res.median_wall_s and base and base.median_wall_s:
            res.ratio_vs_flake8_j2_F = round(res.median_wall_s / base.median_wall_s, 3)
        ruff = results.get((tname, "ruff_F"))
        if res.median_wall_s and ruff and ruff.median_wall_s:
            res.ratio_vs_ruff = round(res.median_wall_s / ruff.median_wall_s, 1)
    diags = {}
    for t in trees:
        rec = compare_diags(t, first[t.name])
        if rec:
            diags[t.name] = rec
    return results, diags
