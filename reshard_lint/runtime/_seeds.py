"""The seed watch: whether ``random``'s and ``numpy.random``'s global generators draw alike on
every process. Pure Python: numpy is imported only when the watch starts, jax never.

RSH101 at run time (``_draws.py``) takes an order drawn from a global generator for another
process's only when it knows that the generator draws differently on each process. That is
a question about the generator's whole history: ``random.seed(0)`` anywhere before the draw
(a test module's body, run at collection; a script's first lines) makes every process draw
the same order. The watch follows the calls that reset a global generator, each of which
decides the question on its own:

- ``seed(value)`` with a constant: alike on every process;
- ``seed()`` / ``seed(None)`` (the operating system's entropy), ``seed(jax.process_index())``
  (a ``ProcessIndex``): different on every process;
- ``setstate`` / ``set_state``: a state from elsewhere, unknown.

What happened before the watch began is unknown, so a generator starts *unknown* and its
draws never raise, with one exception: a watch begun before any of the program's code ran
(``watch()``: the pytest plugin calls it before the conftest files load when strict mode is
on for the run; ``reshard_lint.runtime.watch_seeds()`` in a script's first line) knows that
the generators are still as each process seeded them from its own entropy. That watch lasts
for the rest of the process. Strict mode switched on without it starts a watch of its own
(``start()``), which goes with strict mode's other wrappers (``stop()``): what the program
does while strict mode is off is unknown again.
"""

from __future__ import annotations

import functools
import random
import threading
from typing import Any, Callable

ALIKE, DIFFERS, UNKNOWN = "alike", "differs", "unknown"

# "random", "numpy" -> ALIKE, DIFFERS or UNKNOWN (see above).
_known: dict[str, str] = {"random": UNKNOWN, "numpy": UNKNOWN}
# (owner, attribute, original, wrapper) of the installed hooks.
_hooks: list[tuple[Any, str, Any, Any]] = []
_lasting = False  # watch() was called: the hooks stay, and the state is known from the start
_lock = threading.Lock()  # installing and removing the hooks


class ProcessIndex(int):
    """``jax.process_index()`` as the simulated pod answers the user's code: an int, which
    remembers that it is this process's index, so that a generator seeded with it is known to
    be seeded differently on every process (arithmetic on it gives a plain int)."""

    _rsh_processes: int

    def __new__(cls, value: int, processes: int) -> "ProcessIndex":
        made = super().__new__(cls, value)
        made._rsh_processes = processes
        return made

    def other(self) -> int:
        """Another process's index (the next one, or the one before for the last)."""
        return int(self) + 1 if int(self) + 1 < self._rsh_processes else int(self) - 1


def differs(which: str) -> bool:
    """Whether the global generator ``which`` ("random" or "numpy") is known to draw
    differently on every process."""
    return _known[which] is DIFFERS


def _wrap_seed(which: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def seed(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)  # a seed it refuses changes nothing
        value = args[0] if args else kwargs.get("a", kwargs.get("seed"))
        _known[which] = DIFFERS if value is None or type(value) is ProcessIndex else ALIKE
        return result

    return seed


def _wrap_set_state(which: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def set_state(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _known[which] = UNKNOWN
        return result

    return set_state


def _targets() -> list[tuple[Any, str, str, Callable[[str, Callable[..., Any]], Callable[..., Any]]]]:
    found: list[tuple[Any, str, str, Callable[[str, Callable[..., Any]], Callable[..., Any]]]] = [
        (random, "seed", "random", _wrap_seed), (random, "setstate", "random", _wrap_set_state)]
    try:
        import numpy.random
        import numpy.random.mtrand
    except ImportError:  # no numpy: nothing of it to follow (its state stays unknown)
        return found
    for owner in (numpy.random, numpy.random.mtrand):  # one function, two namespaces
        found += [(owner, "seed", "numpy", _wrap_seed), (owner, "set_state", "numpy", _wrap_set_state)]
    return found


def _install() -> None:
    for owner, name, which, make in _targets():
        original = getattr(owner, name)
        wrapper = make(which, original)
        setattr(owner, name, wrapper)
        _hooks.append((owner, name, original, wrapper))


def watch() -> None:
    """Follow the global generators' seeds for the rest of the process, from a point before
    any of the program's code ran: each generator is as the operating system seeded it, a
    different state on every process. Called again (or after ``start()``), it keeps what it
    knows: only the hooks become lasting."""
    global _lasting
    with _lock:
        if not _lasting and not _hooks:
            _install()
            _known["random"] = _known["numpy"] = DIFFERS
        _lasting = True


def start() -> None:
    """Strict mode switched on: follow the seeds while it is on, from an unknown history
    (unless ``watch()`` follows them already)."""
    with _lock:
        if not _hooks:
            _known["random"] = _known["numpy"] = UNKNOWN
            _install()


def stop() -> None:
    """Strict mode switched off: a watch of its own goes with it (a seed set meanwhile is not
    seen, so the history is unknown again); a lasting watch stays."""
    with _lock:
        if _lasting or not _hooks:
            return
        while _hooks:
            owner, name, original, wrapper = _hooks.pop()
            # Someone patched over ours meanwhile: theirs stays, and ours under it still only
            # records what each seed decides (true whenever it is called).
            if getattr(owner, name, None) is wrapper:
                setattr(owner, name, original)
        _known["random"] = _known["numpy"] = UNKNOWN
