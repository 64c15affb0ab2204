"""Run Python snippets under real multi-controller JAX on CPU (and in one process).

The parent side (everything except ``_worker_main``) imports only the standard
library, so the test session itself never imports jax. Each set of worker processes
runs in its own session (process group) and is killed as a group on the way out.

Multi mode: ``processes`` workers, each with ``devices`` CPU devices, joined by
``jax.distributed.initialize`` on a free loopback port (gloo CPU collectives, the
jax 0.10.2 default). Single mode: one worker with ``processes * devices`` devices and
no distributed runtime.

Batch mode runs many snippets in one set of workers: each snippet gets a fresh
namespace, its outcome is written to a per-process file, and workers meet at a
file barrier before the next snippet. If the set dies on a snippet (crash, hang,
unexpected exit), that snippet is rerun alone so its outcome is its own, and the
rest continue in a fresh set.

The worker is this same file run as a script: ``python harness.py --worker ...``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

Status = Literal["ok", "error", "crash", "timeout"]
Mode = Literal["multi", "single"]

TAIL_CHARS = 4000
DEFAULT_PROCESSES = 2
DEFAULT_DEVICES = 4
DEFAULT_TIMEOUT = 60.0
# Importing jax and connecting to the coordinator is not part of any snippet's budget.
STARTUP_TIMEOUT = 120.0
# When process 0 (it hosts the coordination service) dies, the others abort (SIGABRT)
# at once; when another process dies, process 0 notices only at the heartbeat timeout
# (100 s). Survivors still running this long after a crash are reported as timeouts.
CRASH_GRACE = 5.0
_POLL = 0.05
# A snippet that failed inside a collective or the coordination service leaves gloo in
# a state where a later, healthy collective of the same set can hang (observed: after
# three gloo DEADLINE_EXCEEDED failures, a valid jit hung until the batch timeout).
# After such a failure the set stops and the batch continues in fresh processes.
_POISONED = re.compile(r"Gloo|gloo|DEADLINE_EXCEEDED|CoordinationService|coordination service")


@dataclass(frozen=True)
class ProcessOutcome:
    """What one process did with one snippet."""

    process_id: int
    status: Status
    exc_type: str = ""
    message: str = ""
    signal: int | None = None  # the killing signal, for status 'crash'
    returncode: int | None = None
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""

    @property
    def error_text(self) -> str:
        """``"ExceptionType: message"``, the text an Outcome's regex is searched in."""
        if self.status == "error":
            return f"{self.exc_type}: {self.message}"
        if self.status == "crash":
            return f"crash: signal {self.signal} ({_signal_name(self.signal)})"
        return self.status

    def brief(self) -> str:
        if self.status == "error":
            first = self.message.strip().splitlines()[0] if self.message.strip() else ""
            return f"p{self.process_id}=error({self.exc_type}: {first[:160]})"
        if self.status == "crash":
            return f"p{self.process_id}=crash({_signal_name(self.signal)})"
        return f"p{self.process_id}={self.status}"


def _signal_name(number: int | None) -> str:
    try:
        return signal.Signals(number).name if number is not None else "?"
    except ValueError:
        return "?"


@dataclass(frozen=True)
class SnippetResult:
    """All processes' outcomes for one snippet."""

    index: int
    mode: Mode
    processes: tuple[ProcessOutcome, ...]
    ran_alone: bool = False  # True when run in its own set of processes

    @property
    def statuses(self) -> tuple[Status, ...]:
        return tuple(p.status for p in self.processes)

    def all_ok(self) -> bool:
        return all(p.status == "ok" for p in self.processes)

    def process(self, pid: int) -> ProcessOutcome:
        """The outcome of process ``pid``."""
        return next(p for p in self.processes if p.process_id == pid)

    def brief(self) -> str:
        return f"{self.mode}: " + " ".join(p.brief() for p in self.processes)

    def details(self) -> str:
        parts = [self.brief()]
        for p in self.processes:
            if p.status != "ok":
                parts.append(f"--- process {p.process_id} {p.error_text}\n"
                             f"stderr tail:\n{p.stderr[-1500:]}")
        return "\n".join(parts)


def matches(result: SnippetResult, status: Status, match: str = "",
            where: Literal["any", "all"] = "any") -> bool:
    """Whether ``result`` shows ``status`` (and ``match``) on any/all processes."""
    def one(p: ProcessOutcome) -> bool:
        if p.status != status:
            return False
        return not match or re.search(match, p.error_text) is not None

    hits = [one(p) for p in result.processes]
    return all(hits) if where == "all" else any(hits)


# ----------------------------------------------------------------------------------
# Process bookkeeping: every group we start is killed at exit, whatever happens.

_LIVE_GROUPS: set[int] = set()
_LIVE_LOCK = threading.Lock()
# Every group ever started, so a test can prove that none of them survived.
STARTED_GROUPS: list[int] = []


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    with _LIVE_LOCK:
        _LIVE_GROUPS.discard(pgid)


def kill_all() -> None:
    """Kill every process group this harness started and has not reaped yet."""
    with _LIVE_LOCK:
        groups = list(_LIVE_GROUPS)
    for pgid in groups:
        _kill_group(pgid)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # the id was reused by someone else's group
        return False


def live_groups() -> set[int]:
    """Groups started and still alive (a group whose leader was reaped may linger)."""
    alive: set[int] = set()
    with _LIVE_LOCK:
        groups = list(_LIVE_GROUPS)
    for pgid in groups:
        try:
            os.killpg(pgid, 0)
            alive.add(pgid)
        except ProcessLookupError:
            with _LIVE_LOCK:
                _LIVE_GROUPS.discard(pgid)
    return alive


atexit.register(kill_all)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_CHARS))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONUNBUFFERED"] = "1"
    # Proxy variables make the coordinator's gRPC try to reach 127.0.0.1 through a proxy.
    for key in list(env):
        if "_proxy" in key.lower():
            del env[key]
    # A caller's XLA_FLAGS (say a forced host device count) would fight jax_num_cpu_devices.
    env.pop("XLA_FLAGS", None)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return env


# ----------------------------------------------------------------------------------
# One set of worker processes over a contiguous range of snippets.

@dataclass
class _Worker:
    process_id: int
    popen: subprocess.Popen[bytes]
    pgid: int
    log_out: Path
    log_err: Path


@dataclass
class _SetResult:
    # index -> list of per-process outcomes (None where that process wrote nothing)
    done: dict[int, list[ProcessOutcome | None]] = field(default_factory=dict)
    died_at: int | None = None  # first snippet index not finished by every process
    resume_at: int | None = None  # the set stopped on purpose; continue from here
    final: dict[int, SnippetResult] = field(default_factory=dict)


def _read_result(jobdir: Path, pid: int, index: int) -> dict[str, object] | None:
    path = jobdir / f"p{pid}" / f"{index}.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _outcome_from_record(pid: int, rec: dict[str, object], jobdir: Path, index: int,
                         rc: int | None) -> ProcessOutcome:
    return ProcessOutcome(
        process_id=pid, status=rec["status"],  # type: ignore[arg-type]
        exc_type=str(rec.get("exc_type", "")), message=str(rec.get("message", "")),
        returncode=rc, seconds=float(rec.get("seconds", 0.0)),  # type: ignore[arg-type]
        stdout=_tail(jobdir / f"p{pid}" / f"{index}.out"),
        stderr=_tail(jobdir / f"p{pid}" / f"{index}.err"))


def _run_set(snippets: Sequence[str], timeouts: Sequence[float], start: int, stop: int,
             mode: Mode, processes: int, devices: int, jobdir: Path, alone: bool,
             extra_env: dict[str, str] | None) -> _SetResult:
    """Run snippets[start:stop] in one set of workers until done or the set dies."""
    nproc = processes if mode == "multi" else 1
    ndev = devices if mode == "multi" else processes * devices
    port = free_port()
    budget = STARTUP_TIMEOUT + sum(timeouts[start:stop]) + 30.0
    env = _child_env()
    if extra_env:
        env.update(extra_env)
    workers: list[_Worker] = []
    out = _SetResult()
    try:
        for pid in range(nproc):
            (jobdir / f"p{pid}").mkdir(parents=True, exist_ok=True)
            log_out = jobdir / f"p{pid}" / f"worker-{start}.out"
            log_err = jobdir / f"p{pid}" / f"worker-{start}.err"
            cmd = [sys.executable, "-u", str(Path(__file__).resolve()), "--worker",
                   "--mode", mode, "--process-id", str(pid), "--num-processes", str(nproc),
                   "--devices", str(ndev), "--port", str(port), "--jobdir", str(jobdir),
                   "--start", str(start), "--stop", str(stop),
                   "--parent", str(os.getpid()), "--lifetime", str(budget)]
            with open(log_out, "wb") as fo, open(log_err, "wb") as fe:
                popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                         env=env, start_new_session=True, cwd=str(jobdir))
            # start_new_session makes the child the leader of a new group: pgid == pid.
            with _LIVE_LOCK:
                _LIVE_GROUPS.add(popen.pid)
                STARTED_GROUPS.append(popen.pid)
            workers.append(_Worker(pid, popen, popen.pid, log_out, log_err))

        current = start
        # The clock for snippet `start` begins when every worker is ready (jax imported,
        # distributed runtime connected); until then the startup budget applies.
        started_at: float | None = None
        launch = time.monotonic()
        crashed_at: float | None = None
        while current < stop:
            ready = all((jobdir / f"p{w.process_id}" / f"ready-{start}").exists()
                        for w in workers)
            now = time.monotonic()
            if started_at is None and ready:
                started_at = now
            recs = [_read_result(jobdir, w.process_id, current) for w in workers]
            if all(r is not None for r in recs):
                out.done[current] = [
                    _outcome_from_record(w.process_id, r, jobdir, current, None)  # type: ignore[arg-type]
                    for w, r in zip(workers, recs)]
                current += 1
                started_at = now
                if any(r.get("poisoned") for r in recs) and current < stop:  # type: ignore[union-attr]
                    out.resume_at = current  # the workers exit; see _POISONED
                    break
                continue
            codes = [w.popen.poll() for w in workers]
            exited = [c is not None for c in codes]
            if any(exited):
                # A worker may have written its result and exited since we looked.
                recs = [_read_result(jobdir, w.process_id, current) for w in workers]
                if all(r is not None for r in recs):
                    continue
            if not alone and any(exited):
                break  # crash or unexpected exit: this snippet is rerun alone
            if alone and any(exited):
                if all(exited):
                    break
                if any(c is not None and c < 0 for c in codes):
                    crashed_at = crashed_at or now
                    if now - crashed_at > CRASH_GRACE:
                        break
            if started_at is None:
                if now - launch > STARTUP_TIMEOUT:
                    break
            elif now - started_at > timeouts[current]:
                break
            time.sleep(_POLL)

        if current < stop and out.resume_at is None:
            out.died_at = current
            if alone:
                out.final[current] = _finish_alone(workers, jobdir, current, mode,
                                                   started_at, timeouts[current])
    finally:
        for w in workers:
            _kill_group(w.pgid)
            try:
                w.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    return out


def _finish_alone(workers: list[_Worker], jobdir: Path, index: int, mode: Mode,
                  started_at: float | None, timeout: float) -> SnippetResult:
    """Outcomes of a set running one snippet that did not finish normally."""
    outcomes: list[ProcessOutcome] = []
    # Collect the exit codes before the group is killed, so a crash is not confused
    # with our own SIGKILL.
    codes = [w.popen.poll() for w in workers]
    for w, rc in zip(workers, codes):
        rec = _read_result(jobdir, w.process_id, index)
        if rec is not None:
            outcomes.append(_outcome_from_record(w.process_id, rec, jobdir, index, rc))
            continue
        snippet_err = jobdir / f"p{w.process_id}" / f"{index}.err"
        snippet_out = jobdir / f"p{w.process_id}" / f"{index}.out"
        stderr = _tail(snippet_err) if snippet_err.exists() else _tail(w.log_err)
        stdout = _tail(snippet_out) if snippet_out.exists() else _tail(w.log_out)
        if rc is not None and rc < 0:
            outcomes.append(ProcessOutcome(w.process_id, "crash", signal=-rc, returncode=rc,
                                           stdout=stdout, stderr=stderr))
        elif rc is not None:
            # Exited without a result: it failed before or outside the snippet.
            outcomes.append(ProcessOutcome(
                w.process_id, "error", exc_type="WorkerExit",
                message=f"worker exited with code {rc} without a result; stderr: {stderr[-500:]}",
                returncode=rc, stdout=stdout, stderr=stderr))
        else:
            waited = 0.0 if started_at is None else time.monotonic() - started_at
            outcomes.append(ProcessOutcome(
                w.process_id, "timeout",
                message=f"still running after {waited:.1f}s (timeout {timeout}s)",
                seconds=waited, stdout=stdout, stderr=stderr))
    return SnippetResult(index, mode, tuple(outcomes), ran_alone=True)


def run_batch(snippets: Sequence[str], *, mode: Mode = "multi",
              processes: int = DEFAULT_PROCESSES, devices: int = DEFAULT_DEVICES,
              timeout: float | Sequence[float] = DEFAULT_TIMEOUT,
              alone: Sequence[bool] | None = None,
              extra_env: dict[str, str] | None = None) -> list[SnippetResult]:
    """Run every snippet, sharing processes between them; one result per snippet.

    ``processes`` and ``devices`` describe the multi-mode topology; single mode uses
    one process with ``processes * devices`` devices. ``timeout`` bounds each snippet
    (a sequence gives one per snippet). Snippets flagged in ``alone`` (known to crash
    or hang) get their own set of processes.
    """
    n = len(snippets)
    timeouts = [float(timeout)] * n if isinstance(timeout, (int, float)) else [float(t) for t in timeout]
    if len(timeouts) != n:
        raise ValueError("one timeout per snippet")
    flags = list(alone) if alone is not None else [False] * n
    results: dict[int, SnippetResult] = {}
    with tempfile.TemporaryDirectory(prefix="rshmc-") as tmp:
        jobdir = Path(tmp)
        (jobdir / "snippets.json").write_text(json.dumps(list(snippets)))
        # Each set kills its own group in _run_set's finally; no global kill here, as
        # other threads may be running sets of their own.
        # Runs of consecutive batchable snippets share a set; the rest run alone.
        i = 0
        while i < n:
            if flags[i]:
                results[i] = _run_alone(snippets, timeouts, i, mode, processes, devices,
                                        jobdir, extra_env)
                i += 1
                continue
            j = i
            while j < n and not flags[j]:
                j += 1
            start = i
            while start < j:
                res = _run_set(snippets, timeouts, start, j, mode, processes, devices,
                               jobdir, alone=False, extra_env=extra_env)
                for idx, outs in res.done.items():
                    results[idx] = SnippetResult(idx, mode, tuple(o for o in outs if o))
                if res.resume_at is not None:
                    start = res.resume_at
                    continue
                if res.died_at is None:
                    break
                k = res.died_at
                results[k] = _run_alone(snippets, timeouts, k, mode, processes, devices,
                                        jobdir, extra_env)
                start = k + 1
            i = j
    return [results[i] for i in range(n)]


def _run_alone(snippets: Sequence[str], timeouts: Sequence[float], index: int, mode: Mode,
               processes: int, devices: int, jobdir: Path,
               extra_env: dict[str, str] | None) -> SnippetResult:
    # A rerun must not see what an earlier set wrote for this snippet.
    for p in jobdir.glob(f"p*/{index}.*"):
        p.unlink()
    for p in jobdir.glob(f"p*/ready-{index}"):
        p.unlink()
    res = _run_set(snippets, timeouts, index, index + 1, mode, processes, devices, jobdir,
                   alone=True, extra_env=extra_env)
    if index in res.final:
        return res.final[index]
    outs = res.done[index]
    return SnippetResult(index, mode, tuple(o for o in outs if o), ran_alone=True)


def run_snippet(code: str, *, mode: Mode = "multi", processes: int = DEFAULT_PROCESSES,
                devices: int = DEFAULT_DEVICES, timeout: float = DEFAULT_TIMEOUT,
                extra_env: dict[str, str] | None = None) -> SnippetResult:
    """Run one snippet in its own set of processes."""
    return run_batch([code], mode=mode, processes=processes, devices=devices,
                     timeout=timeout, alone=[True], extra_env=extra_env)[0]


# ----------------------------------------------------------------------------------
# Worker side. Everything below runs in the child; jax is imported only here.

def _watch_parent(parent: int, lifetime: float) -> None:
    """Die with our whole group if the parent goes away or the lifetime runs out."""
    deadline = time.monotonic() + lifetime

    def loop() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent or time.monotonic() > deadline:
                try:
                    os.killpg(os.getpgrp(), signal.SIGKILL)
                finally:
                    os._exit(137)

    threading.Thread(target=loop, daemon=True, name="rshmc-parent-watch").start()


def _write_json(path: Path, data: dict[str, object]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)  # readers never see half a file


def _worker_main(argv: Sequence[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--mode", choices=["multi", "single"], required=True)
    ap.add_argument("--process-id", type=int, required=True)
    ap.add_argument("--num-processes", type=int, required=True)
    ap.add_argument("--devices", type=int, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--jobdir", required=True)
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--stop", type=int, required=True)
    ap.add_argument("--parent", type=int, required=True)
    ap.add_argument("--lifetime", type=float, required=True)
    args = ap.parse_args(list(argv))
    _watch_parent(args.parent, args.lifetime)
    jobdir = Path(args.jobdir)
    mine = jobdir / f"p{args.process_id}"
    snippets: list[str] = json.loads((jobdir / "snippets.json").read_text())

    import jax

    # Must precede backend initialisation: it fixes the number of CPU devices.
    jax.config.update("jax_num_cpu_devices", args.devices)
    if args.mode == "multi":
        jax.distributed.initialize(
            coordinator_address=f"127.0.0.1:{args.port}",
            num_processes=args.num_processes, process_id=args.process_id,
            initialization_timeout=int(STARTUP_TIMEOUT))
    jax.devices()  # start the backend (and gloo) now, not inside the first snippet

    real_update = jax.config.update
    changed: dict[str, object] = {}

    def _noop_initialize(*_a: object, **_k: object) -> None:
        # The harness already joined the processes; a snippet's own initialize (a
        # multi-controller sign in its source) would raise "only be called once".
        return None

    def _noop_shutdown(*_a: object, **_k: object) -> None:
        # Shutting down would break every later snippet in the batch.
        return None

    def _update(name: str, value: object) -> None:
        if name == "jax_num_cpu_devices":
            # The topology belongs to the harness; after backend start jax would raise.
            return None
        if name not in changed:
            changed[name] = getattr(jax.config, name)
        real_update(name, value)

    jax.distributed.initialize = _noop_initialize  # type: ignore[assignment]
    jax.distributed.shutdown = _noop_shutdown  # type: ignore[assignment]
    jax.config.update = _update  # type: ignore[method-assign]

    (mine / f"ready-{args.start}").write_text("")

    stdout_fd = os.dup(1)
    stderr_fd = os.dup(2)
    for index in range(args.start, args.stop):
        out_path = mine / f"{index}.out"
        err_path = mine / f"{index}.err"
        sys.stdout.flush()
        sys.stderr.flush()
        fo = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        fe = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        # fd-level redirection also catches XLA's C++ logging for this snippet.
        os.dup2(fo, 1)
        os.dup2(fe, 2)
        os.close(fo)
        os.close(fe)
        record: dict[str, object]
        t0 = time.monotonic()
        try:
            code = compile(snippets[index], f"<snippet {index}>", "exec")
            namespace: dict[str, object] = {"__name__": "__main__", "__builtins__": __builtins__}
            # As if run by `python snippet.py`: the worker's own arguments must not leak
            # into programs that look at sys.argv.
            sys.argv = [f"snippet_{index}.py"]
            exec(code, namespace)
            jax.effects_barrier()
            record = {"status": "ok"}
        except SystemExit as e:
            if e.code in (None, 0):
                record = {"status": "ok"}
            else:
                record = {"status": "error", "exc_type": "SystemExit", "message": str(e.code)}
        except BaseException as e:  # noqa: B902 - every failure of a snippet is an outcome
            import traceback

            traceback.print_exc()
            record = {"status": "error", "exc_type": type(e).__name__, "message": str(e)}
        record["seconds"] = time.monotonic() - t0
        if record["status"] == "error" and _POISONED.search(
                f"{record.get('exc_type', '')}: {record.get('message', '')}"):
            record["poisoned"] = True
        # Leave no global mesh or config change for the next snippet.
        try:
            jax.set_mesh(None)
        except Exception:  # noqa: BLE001 - best effort cleanup
            pass
        for name, old in changed.items():
            try:
                real_update(name, old)
            except Exception:  # noqa: BLE001
                pass
        changed.clear()
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        _write_json(mine / f"{index}.json", record)
        # Barrier: nobody starts the next snippet until every process finished this one,
        # so a hang or crash is pinned on one snippet.
        while not all((jobdir / f"p{q}" / f"{index}.json").exists()
                      for q in range(args.num_processes)):
            time.sleep(0.01)
        if index + 1 < args.stop and any(
                json.loads((jobdir / f"p{q}" / f"{index}.json").read_text()).get("poisoned")
                for q in range(args.num_processes)):
            break
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip jax's atexit shutdown barrier: the parent has every result already.
    os._exit(0)


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        _worker_main(sys.argv[1:])
    else:
        print("usage: harness.py is a library; run the tests under tests/multicontroller",
              file=sys.stderr)
        sys.exit(2)
