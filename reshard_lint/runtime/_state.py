"""Which strict-mode settings are active, shared by every thread. Pure Python, no jax.

JAX's ``device_put`` is one module attribute for the whole process, so strict mode is
process-wide too: the wrappers read ``current`` without a lock (one attribute read), and
every change to the stack happens under ``_lock`` together with installing or removing the
wrappers, so a reader never sees wrappers without settings for long enough to matter (it
then just passes the call through).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, Literal, Tuple, Union

Reorder = Literal["warn", "raise", "ignore"]
# A platform's name or a number of processes (None: automatic), with the process played
# when it is not process 0.
Split = Union[int, str, None, Tuple[Union[int, str, None], int]]
REORDER_CHOICES: tuple[str, ...] = ("warn", "raise", "ignore")
# The platform families a step is judged under (the linter's ``platforms`` setting too).
PLATFORM_CHOICES: tuple[str, ...] = ("tpu", "gpu", "cpu")


@dataclass(frozen=True)
class StrictConfig:
    """Settings of one strict-mode activation.

    ``processes``: how many equal hosts to split ``jax.devices()`` into, in order.
    ``None`` means automatic: the real processes under multi-controller JAX, otherwise 2 when
    the device count is even and above 1, otherwise 1. ``1`` turns the RSH3xx checks off.
    ``reorder``: what RSH202 (same devices, another order) does.
    """

    processes: int | None = None
    reorder: Reorder = "warn"
    platform: str | None = None  # a name from runtime/platforms.py: its ids, hosts and mesh orders
    # Which simulated process the run plays: 0 by default; -1 the last (negative counts from
    # the end, as a list index). Code that only another process runs (a put onto
    # jax.devices()[0] from a process that does not own it) fails when the run plays it.
    process: int = 0
    # The platforms the project targets: a step between two meshes built by device-order
    # builders is judged under each (_across.py), whichever one the run simulates. A list
    # is accepted and kept as a tuple in PLATFORM_CHOICES' order.
    platforms: Tuple[str, ...] = PLATFORM_CHOICES

    # What decides the process split and which process is this one, and so the verdict
    # caches' key: the platform's name or the number of simulated processes (None:
    # automatic), paired with the process played when it is not 0. A plain attribute, set
    # once: every read of an array's value looks it up.
    split: Split = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        from .errors import StrictConfigError

        names = (self.platforms,) if isinstance(self.platforms, str) else self.platforms
        try:
            wanted = [str(p).strip().lower() for p in names]
        except TypeError:
            raise StrictConfigError(f"platforms must be a list of {PLATFORM_CHOICES}, "
                                    f"not {self.platforms!r}") from None
        unknown = [p for p in wanted if p not in PLATFORM_CHOICES]
        if unknown:
            raise StrictConfigError(f"platforms: {', '.join(map(repr, unknown))} is not one of "
                                    f"{', '.join(map(repr, PLATFORM_CHOICES))}")
        object.__setattr__(self, "platforms", tuple(p for p in PLATFORM_CHOICES if p in wanted))

        base = self.platform if self.platform is not None else self.processes
        object.__setattr__(self, "split", base if self.process == 0 else (base, self.process))

        if self.platform is not None:
            from .platforms import platform

            hosts = platform(self.platform).hosts  # StrictConfigError for an unknown name
            if self.processes is not None and self.processes != hosts:
                raise StrictConfigError(
                    f"platform {self.platform!r} has {hosts} host{'s' * (hosts > 1)}, not "
                    f"processes={self.processes}; leave processes out")
            if not -hosts <= self.process < hosts:
                raise StrictConfigError(f"platform {self.platform!r} has {hosts} hosts: process="
                                        f"{self.process} is not one of them (0 ... {hosts - 1}, or -1)")

        if self.processes is not None and (not isinstance(self.processes, int)
                                           or isinstance(self.processes, bool)
                                           or self.processes < 1):
            raise StrictConfigError(f"processes must be None or an int >= 1, not {self.processes!r}")
        if self.reorder not in REORDER_CHOICES:
            raise StrictConfigError(f"reorder must be one of {REORDER_CHOICES}, not {self.reorder!r}")
        if not isinstance(self.process, int) or isinstance(self.process, bool):
            raise StrictConfigError(f"process must be an int (0 is the first process, -1 the last), "
                                    f"not {self.process!r}")
        if self.processes is not None and not -self.processes <= self.process < self.processes:
            raise StrictConfigError(f"process={self.process} is not one of the {self.processes} "
                                    f"simulated processes (0 ... {self.processes - 1}, or -1 for the last)")



class _Token:
    """Identifies one ``strict()`` entry, so contexts may exit out of order (threads)."""

    __slots__ = ()


_lock = threading.RLock()
# (token, settings); settings None means "suspended" (a strict-free region inside strict mode).
_stack: list[tuple[_Token, StrictConfig | None]] = []
_process_config: StrictConfig | None = None

# What the wrappers read on every call: the innermost live setting, or None for pass-through.
current: StrictConfig | None = None


def settings_lock() -> threading.RLock:
    """The lock held while the settings change and the wrappers are installed or removed
    (to install more of them later, as ``_numpy_reads`` does)."""
    return _lock


def _no_wrappers(install: bool, config: StrictConfig | None) -> None:
    raise RuntimeError("reshard_lint.runtime did not register its JAX wrappers")


# Installs (True) or removes (False) the JAX wrappers, given the settings about to apply
# (some wrappers depend on them): set by the package (runtime/__init__) when it is imported,
# which is always before this module can be used, so that this low-level module never
# imports the module that patches JAX.
_set_wrappers: Callable[[bool, StrictConfig | None], None] = _no_wrappers


def register_wrappers(set_wrappers: Callable[[bool, StrictConfig | None], None]) -> None:
    """Called once by the package: what ``_recompute`` calls to install or remove the wrappers."""
    global _set_wrappers
    _set_wrappers = set_wrappers


def _recompute() -> None:
    """Refresh ``current`` and install or remove the JAX wrappers to match. Caller holds _lock."""
    global current
    new = _stack[-1][1] if _stack else _process_config
    needs_wrappers = bool(_stack) or _process_config is not None
    if needs_wrappers:
        _set_wrappers(True, new)
        current = new
    else:
        current = None
        _set_wrappers(False, None)
    _forget_answers()  # after ``current`` changed: see _pod.forget


def _forget_answers() -> None:
    """The simulated pod's remembered answers (jax.process_index() ...) belong to the
    settings and the program they were computed for."""
    pod = sys.modules.get("reshard_lint.runtime._pod")
    if pod is not None:
        pod.forget()


def new_program() -> None:
    """Forget what the program told strict mode (that it asked for jax.local_devices()):
    called when strict mode goes from off to on, and by the pytest plugin before each test,
    so one program's or test's facts never change another's verdicts."""
    checks = sys.modules.get("reshard_lint.runtime._checks")
    if checks is not None:
        checks.local_asked = False  # type: ignore[attr-defined]
    everyone = sys.modules.get("reshard_lint.runtime._everyone")
    if everyone is not None:
        everyone.forget()  # what arrays were made as, and the source read (_sites)
    across = sys.modules.get("reshard_lint.runtime._across")
    if across is not None:
        across.forget()  # the recipes read from the source (RSH202 on other platforms)
    draws = sys.modules.get("reshard_lint.runtime._draws")
    if draws is not None:
        draws.forget()  # the device orders the program drew (RSH101)
    _forget_answers()  # jax.local_devices()'s remembered answer skips setting local_asked


def _off() -> bool:
    return not _stack and _process_config is None


def push(config: StrictConfig | None) -> _Token:
    token = _Token()
    with _lock:
        if _off():
            new_program()
        _stack.append((token, config))
        try:
            _recompute()
        except BaseException:
            _stack.pop()
            raise
    return token


def pop(token: _Token) -> None:
    with _lock:
        for i in range(len(_stack) - 1, -1, -1):
            if _stack[i][0] is token:
                del _stack[i]
                break
        _recompute()


def set_process_config(config: StrictConfig | None) -> None:
    global _process_config
    with _lock:
        if _off():
            new_program()
        previous = _process_config
        _process_config = config
        try:
            _recompute()
        except BaseException:
            _process_config = previous
            raise
