"""Sharing `check`'s work between worker processes and this one.

Most files that pass the text prefilter are rejected by the ast gate, and the few that
pass go to the engine. Run one after the other, the engine's files wait for the
whole gate, and a core idles while this process analyses them; a full pool of workers
besides an idle parent also holds one process too many in memory. So every step here
runs on ``jobs - 1`` workers plus this process: the files are queued for the workers
as they are read, and this process takes files from the end of the queue whenever it
has nothing better to do. While the gate runs, the better thing is analysing a
candidate it has found.

Whoever starts a file first claims it in an array shared with the workers; the other
side skips it. (Cancelling a queued task instead is not safe: on Python 3.11, a worker
that dies while a cancelled task is queued stops the pool's thread before it has
failed the other tasks, and the run would wait for them forever.)
"""

from __future__ import annotations

import os
import sys
import threading
from collections import deque
from typing import Any, Callable, Iterable, Sequence, TypeVar

# A file: (index, text, path), and after the gate what it prepared (prepared.py), if anything.
Item = tuple[Any, ...]
R = TypeVar("R")

_SKIPPED = "skipped"  # a worker's answer for a file this process claimed first
_CLAIMS: Any = None  # in a worker: (array, lock) from Workers


def _hold_claims(claims: Any) -> None:
    global _CLAIMS
    _CLAIMS = claims


def _claim(claims: Any, index: int, step: int) -> bool:
    """Take file ``index`` for ``step`` (1: gate, 2: engine) unless someone has."""
    array, lock = claims
    with lock:
        if array[index] >= step:
            return False
        array[index] = step
        return True


def in_worker() -> bool:
    return _CLAIMS is not None


def _claimed(run: Callable[[Item], R], step: int, item: Item) -> R | str:
    """A worker's task: ``run(item)``, unless this process took the file first."""
    if not _claim(_CLAIMS, item[0], step):
        return _SKIPPED
    return run(item)


# Below this many files, or this many bytes of them, forking a worker costs more than it
# saves: on the benchmark's 216-file, 418 KB project tree the forked worker only gated,
# for the same wall time as one process (0.62-0.81 s against 0.68-0.75 s) and 53.5 MB of
# resident memory for the two processes against 33.6 MB for one.
MIN_PARALLEL_GATE = 64
MIN_PARALLEL_BYTES = 512 * 1024


# Files this process keeps (share_keeping) from this many lines on run after the
# workers are let go.
HOLD_LINES = 700


def worth_workers(paths: Sequence[str]) -> bool:
    """Whether ``paths`` are enough work to fork workers for: as many files and bytes as
    above (one stat a file, until the bytes are reached)."""
    if len(paths) < MIN_PARALLEL_GATE:
        return False
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except OSError:
            continue  # reported when it is read
        if total >= MIN_PARALLEL_BYTES:
            return True
    return False


def fork_context() -> Any:
    """fork where it is safe: a worker starts in milliseconds, with what this process holds
    so far (nothing unsafe: no threads, no engine yet); the platform's default elsewhere."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform != "darwin" else None)


class Workers:
    """A pool of worker processes kept for a whole run, forked when first used.

    Forked at the first file, before this process imports the engine: a worker imports it
    only if it is given files to analyse, after the gate. ``files`` bounds the indexes.
    """

    def __init__(self, count: int, files: int) -> None:
        self._ctx = fork_context()
        self.count = count
        self.claims = (self._ctx.RawArray("b", max(1, files)), self._ctx.Lock())
        self._pool: Any = None

    def pool(self) -> Any:
        if self._pool is None:
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(self.count, mp_context=self._ctx, initializer=_hold_claims,
                                             initargs=(self.claims,))
        return self._pool

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Let the workers go: what they hold is no longer this run's to hold."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def share(workers: Workers, step: int, items: Iterable[Item], run: Callable[[Item], R],
          done: Callable[[Item, R], None], between: Callable[[], bool] = lambda: False) -> None:
    """``run`` every item on the workers or here; ``done`` with each result, here.

    ``between()`` is offered the turn before this process takes a file from the end of
    the queue; it returns True when it used the turn. A worker that dies leaves its
    files to this process, so nothing is lost and nothing is done twice.
    """
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool
    from functools import partial

    finished: deque[Future[Any]] = deque()  # appended by the pool's thread
    woken = threading.Event()
    task = partial(_claimed, run, step)

    def on_done(fut: Future[Any]) -> None:
        finished.append(fut)
        woken.set()

    waiting: dict[Future[Any], Item] = {}
    order: deque[Future[Any]] = deque()
    here: set[int] = set()  # files this process claimed and ran
    broken = False
    for item in items:
        if not broken:
            try:
                fut = workers.pool().submit(task, item)
            except (BrokenProcessPool, RuntimeError):
                broken = True
            else:
                waiting[fut] = item
                order.append(fut)
                fut.add_done_callback(on_done)
                continue
        _claim(workers.claims, item[0], step)
        done(item, run(item))
    while waiting:
        while finished:
            fut = finished.popleft()
            item = waiting.pop(fut)
            if item[0] in here:
                continue
            try:
                result = fut.result()
            except Exception:  # noqa: BLE001 - a dead worker's file (BrokenProcessPool, OSError ...)
                result = run(item)
            if result != _SKIPPED:
                done(item, result)
        if not waiting or between():
            continue
        while order and (order[-1] not in waiting or order[-1].done()):
            order.pop()
        if order:
            # Workers take files in queue order: when the last one is theirs, so is
            # every one before it that is not done.
            item = waiting[order.pop()]
            if _claim(workers.claims, item[0], step):
                here.add(item[0])
                done(item, run(item))
                continue
        woken.clear()
        if not finished:
            woken.wait(1.0)


def share_keeping(workers: Workers, step: int, items: Iterable[Item], keep: Callable[[Item], bool],
                  run: Callable[[Item], R], done: Callable[[Item, R], None],
                  run_here: Callable[[Item], None]) -> None:
    """``share`` the items, except those ``keep`` says this process runs (``run_here``):
    one of those at each turn this process gets, and what is left of them at the end.
    Those of ``HOLD_LINES`` or more wait for the end, after the workers are let go: a
    long file's tree and analysis (14 MB for orbax's 1,471-line colocated_controller.py)
    beside the idle workers' engines and trees made the run's peak."""
    mine: deque[Item] = deque()
    held: list[Item] = []
    shared: list[Item] = []
    for item in items:
        if not keep(item):
            shared.append(item)
        else:
            (held if item[1].count("\n") >= HOLD_LINES else mine).append(item)

    def one_of_mine() -> bool:
        if not mine:
            return False
        run_here(mine.popleft())
        return True

    share(workers, step, shared, run, done, one_of_mine)
    if held:
        workers.close()
    for item in (*mine, *held):
        run_here(item)


def passed(item: Item, verdict: tuple[Any, ...]) -> Item:
    """A file the gate let through, with what the gate prepared for it, if anything:
    ``verdict`` is (index, True) or (index, True, prepared or None)."""
    return item + verdict[2:3] if len(verdict) > 2 and verdict[2] is not None else item


def gate_and_analyse(workers: Workers, items: Iterable[Item], gate: Callable[[Item], tuple[Any, ...]],
                     analyse: Callable[[Item], None], reject: Callable[..., None]) -> list[Item]:
    """Gate ``items`` as they come, analysing here what passes while the gate runs.

    Returns the candidates not analysed when the gate finishes, for the caller to share
    out.
    """
    ready: deque[Item] = deque()

    def decided(item: Item, verdict: tuple[Any, ...]) -> None:
        if verdict[1]:
            ready.append(passed(item, verdict))
        else:
            reject(item[0], *verdict[3:])  # (index, False, None[, deps, interfaces])

    def analyse_one() -> bool:
        if not ready:
            return False
        analyse(ready.popleft())
        return True

    share(workers, 1, items, gate, decided, analyse_one)
    return list(ready)
