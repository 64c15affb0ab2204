"""RSH101 at run time: a mesh built from a device order that differs between processes. Imports jax.

On a pod every process runs the same program, and each must build the same mesh. An order
drawn from a generator that is not seeded alike everywhere (the global ``random`` /
``np.random`` state as each process seeded it from its own entropy,
``np.random.default_rng()``, a generator seeded with ``jax.process_index()``) or read off a
set of devices (its order follows the devices' hashes, which are their addresses:
``jaxlib`` Device keeps ``object.__hash__``) comes out differently on every process. One
process cannot see the disagreement, but it can see where such an order comes from:

- each hooked draw (``random.shuffle``/``sample``, ``np.random.permutation``/``shuffle``/
  ``choice`` on a global state that the seed watch, ``_seeds.py``, knows to differ between
  processes; the same methods of a ``default_rng()`` / per-process generator made while
  strict mode is on) is drawn once more on a copy of its input with a generator in another
  state (a fresh one from the operating system's entropy, or the one seeded with another process's
  index): when the two draws differ, the order is another process's draw, and it is
  remembered (device ids for a draw of devices; the permutation for a draw of ``range(n)``);
- a device set handed to the user's code (``x.devices()``, ``sharding.device_set``) is a
  copy whose iteration, when the user's code lists it, remembers the order it gave;
- ``Mesh(devices, ...)`` built by the user's code whose flattened device ids (or positions in
  ``jax.devices()``) equal a remembered order raises RSH101 at the user's line.

The program's draws are its generator's own: the hooks call the original function on the
original generator, and the second draw uses a generator of its own (so not even extra
randomness is taken from the program's). Orders of fewer than ``MIN_DEVICES`` devices, and
orders a program builds on purpose (natural, reversed, rotated, a transposed grid) are never
remembered: a mesh built that way on purpose could equal them by chance.
"""

from __future__ import annotations

import functools
import os
import random
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import jax
import numpy as np

from . import _across, _seeds, _state
from ._format import fmt_ids
from ._seeds import ProcessIndex
from ._where import from_library, user_location
from .errors import ReshardError

# A random order of 2 or 3 devices equals a deliberate one (reversed ...) too often.
MIN_DEVICES = 4


@dataclass(frozen=True)
class Draw:
    how: str  # "random.shuffle", "list() of x.devices()" ...
    where: tuple[str, int] | None  # the user's line that drew it
    from_set: bool = False


# Process-dependent orders the program drew: real device ids, and permutations of range(n).
_by_ids: dict[tuple[int, ...], Draw] = {}
_by_positions: dict[tuple[int, ...], Draw] = {}


def forget() -> None:
    """A new program: its draws are its own."""
    _by_ids.clear()
    _by_positions.clear()


@functools.lru_cache(maxsize=32)
def _deliberate_bases(ranked: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Sorted, reversed, each grid of the sorted order transposed, and these reversed."""
    n = len(ranked)
    bases = [ranked, ranked[::-1]]
    for rows in range(2, n):
        if n % rows == 0:
            cols = n // rows
            transposed = tuple(ranked[r * cols + c] for c in range(cols) for r in range(rows))
            bases += [transposed, transposed[::-1]]
    return tuple(bases)


def _deliberate(order: tuple[int, ...]) -> bool:
    """Orders a program builds on purpose: one of the bases above, or a rotation of one."""
    for base in _deliberate_bases(tuple(sorted(order))):
        k = base.index(order[0])
        if order == base[k:] + base[:k]:
            return True
    return False


def _key(items: Sequence[Any]) -> tuple[str, tuple[int, ...]] | None:
    """("ids", real device ids) for devices, ("positions", p) for a permutation of range(n)."""
    if not items:
        return None
    if all(isinstance(d, jax.Device) for d in items):
        return "ids", tuple(int(d.id) for d in items)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        values = tuple(int(v) for v in items)
        if sorted(values) == list(range(len(values))):
            return "positions", values
    return None


def _flat(values: Any) -> list[Any] | None:
    if isinstance(values, np.ndarray):
        return list(values.flat) if values.ndim == 1 else None
    if isinstance(values, (list, tuple)):
        return list(values)
    return None


def _note(drawn: Any, other: Any, how: str, frame: Any) -> None:
    """Remember ``drawn`` when it is an order of devices (or of positions) that another
    process's draw (``other``) does not give."""
    ours, theirs = _flat(drawn), _flat(other)
    if ours is None or theirs is None or len(ours) < MIN_DEVICES:
        return
    key, other_key = _key(ours), _key(theirs)
    if key is None or key == other_key or _deliberate(key[1]):
        return
    draw = Draw(how, user_location(frame))
    (_by_ids if key[0] == "ids" else _by_positions)[key[1]] = draw


def _worth(values: Any) -> bool:
    """A sequence that may be a device order: between MIN_DEVICES and the device count long."""
    try:
        n = len(values)
    except TypeError:
        return False
    return MIN_DEVICES <= n <= len(jax.devices())


# --------------------------------------------------------------------------- global generators


_others: dict[str, Any] = {}


def _fresh(which: str) -> Any:
    """A generator in another process's state: strict mode's own, seeded once from the
    operating system's entropy (seeding one per draw costs about 100 us)."""
    other = _others.get(which)
    if other is None:
        other = _others[which] = random.Random(os.urandom(32)) if which == "random" \
            else np.random.RandomState()
    return other


def wrap_in_place(which: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``random.shuffle(x)`` / ``np.random.shuffle(x)`` on the global state."""
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def shuffle(x: Any, *args: Any, **kwargs: Any) -> Any:
            if _state.current is None or not _seeds.differs(which) or not _worth(x):
                return original(x, *args, **kwargs)
            before = x.copy() if isinstance(x, np.ndarray) else list(x)
            result = original(x, *args, **kwargs)
            other = before.copy() if isinstance(before, np.ndarray) else list(before)
            getattr(_fresh(which), "shuffle")(other)
            _note(x, other, name, sys._getframe(1))
            return result
        return shuffle
    return make


def wrap_drawn(which: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``random.sample`` / ``np.random.permutation`` / ``np.random.choice`` on the global state."""
    method = name.rsplit(".", 1)[1]

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def draw(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            if _state.current is not None and _seeds.differs(which) and _worth(result):
                _note(result, getattr(_fresh(which), method)(*args, **kwargs), name, sys._getframe(1))
            return result
        return draw
    return make


# --------------------------------------------------------------------------- np.random.default_rng


class PerProcessGenerator(np.random.Generator):
    """``np.random.default_rng()`` (entropy) or ``default_rng(jax.process_index())`` under
    strict mode: numpy's Generator on the same bit generator (the same draws), whose
    permutation, shuffle and choice are drawn once more as another process would."""

    _rsh_how: str
    _rsh_other: Callable[[], np.random.Generator]

    def _rsh_check(self, method: str, drawn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if _state.current is not None and _worth(drawn):
            other = getattr(self._rsh_other(), method)(*args, **kwargs)
            _note(drawn, other, f"{self._rsh_how}.{method}", sys._getframe(2))

    def permutation(self, *args: Any, **kwargs: Any) -> Any:
        drawn = super().permutation(*args, **kwargs)
        self._rsh_check("permutation", drawn, args, kwargs)
        return drawn

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        drawn = super().choice(*args, **kwargs)
        self._rsh_check("choice", drawn, args, kwargs)
        return drawn

    def shuffle(self, x: Any, *args: Any, **kwargs: Any) -> None:
        if _state.current is None or not _worth(x):
            return super().shuffle(x, *args, **kwargs)
        before = x.copy() if isinstance(x, np.ndarray) else list(x)
        super().shuffle(x, *args, **kwargs)
        self._rsh_other().shuffle(before, *args, **kwargs)
        _note(x, before, f"{self._rsh_how}.shuffle", sys._getframe(1))
        return None


def _fresh_generator(default_rng: Callable[..., Any]) -> Any:
    other = _others.get("generator")
    if other is None:
        other = _others["generator"] = default_rng(None)
    return other


def wrap_default_rng(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def default_rng(seed: Any = None) -> Any:
        made = original(seed)
        if _state.current is None or not (seed is None or type(seed) is ProcessIndex):
            return made
        tagged = PerProcessGenerator(made.bit_generator)
        if seed is None:
            tagged._rsh_how = "np.random.default_rng() (unseeded)"
            tagged._rsh_other = lambda: _fresh_generator(original)
        else:
            other = seed.other()
            tagged._rsh_how = "np.random.default_rng(jax.process_index())"
            tagged._rsh_other = lambda: original(other)
        return tagged

    return default_rng


# --------------------------------------------------------------------------- device sets


class ListedSet(set):
    """A device set handed to the user's code (a copy): listing it remembers its order."""

    _rsh_how: str = "a device set"

    def __iter__(self) -> Iterator[Any]:
        caller = sys._getframe(1)
        if _state.current is None or from_library(caller) or len(self) < MIN_DEVICES:
            return set.__iter__(self)
        order = tuple(set.__iter__(self))
        key = _key(order)
        if key is not None and key[0] == "ids" and not _deliberate(key[1]):
            _by_ids[key[1]] = Draw(self._rsh_how, user_location(caller), from_set=True)
        return iter(order)


def _listed(found: Any, how: str) -> Any:
    if type(found) is not set or len(found) < MIN_DEVICES:
        return found
    copy = ListedSet(found)
    copy._rsh_how = how
    return copy


def wrap_array_devices(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def devices(self: Any) -> Any:
        found = original(self)
        if _state.current is None or from_library(sys._getframe(1)):
            return found
        return _listed(found, "x.devices()")

    return devices


def wrap_device_set(prop: property) -> property:
    fget = prop.fget
    assert fget is not None

    def device_set(self: Any) -> Any:
        found = fget(self)
        if _state.current is None or from_library(sys._getframe(1)):
            return found
        return _listed(found, "sharding.device_set")

    return property(device_set, doc=prop.__doc__)


# --------------------------------------------------------------------------- the mesh


def wrap_mesh_new(original: Any) -> Any:
    """``Mesh.__new__`` as found in the class's ``__dict__``: the staticmethod Python makes
    of a ``__new__`` in a class body, or a plain function (or other callable) when a test
    harness or a library assigned ``Mesh.__new__ = f`` later, which Python accepts and calls
    with the class first. The wrapper is stored in the same kind it found."""
    wrapped = isinstance(original, staticmethod)
    make = original.__func__ if wrapped else original

    def __new__(cls: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: show the user's line, not this frame
        config = _state.current
        if (_by_ids or _by_positions) and config is not None \
                and not from_library(sys._getframe(1)):
            check_mesh(args[0] if args else kwargs.get("devices"))
        mesh = make(cls, *args, **kwargs)
        if config is not None and config.platforms:
            # where its devices sit on every target platform (_across)
            _across.note_mesh(mesh, args[0] if args else kwargs.get("devices"), sys._getframe(1))
        return mesh

    return staticmethod(__new__) if wrapped else __new__


def check_mesh(devices: Any) -> None:
    """RSH101 when the mesh's devices, flattened, are an order another process draws otherwise."""
    __tracebackhide__ = True
    try:
        flat = list(np.asarray(devices, dtype=object).flat)
    except Exception:  # not an array of devices: JAX says what is wrong
        return
    if len(flat) < MIN_DEVICES or not all(isinstance(d, jax.Device) for d in flat):
        return
    ids = tuple(int(d.id) for d in flat)
    draw = _by_ids.get(ids)
    if draw is None and _by_positions:
        place = {d: i for i, d in enumerate(jax.devices(flat[0].platform))}
        if all(d in place for d in flat):
            draw = _by_positions.get(tuple(place[d] for d in flat))
    if draw is not None:
        raise_rsh101(ids, draw)


def raise_rsh101(ids: tuple[int, ...], draw: Draw) -> None:
    __tracebackhide__ = True
    here = user_location(sys._getframe(1))
    where = ""
    if draw.where is not None:
        same_file = here is not None and here[0] == draw.where[0]
        where = f" (line {draw.where[1]})" if same_file else f" ({draw.where[0]}:{draw.where[1]})"
    if draw.from_set:
        message = (f"RSH101 Mesh is built from devices {fmt_ids(ids)} listed from {draw.how}{where}, "
                   "a set listed in its iteration order, which follows the devices' hashes and "
                   "differs between processes: every "
                   "process builds a different mesh and the first collective hangs until a deadline "
                   "error; list the devices in a fixed order, e.g. x.sharding.mesh.devices or "
                   "sorted(..., key=lambda d: d.id)")
    else:
        message = (f"RSH101 Mesh is built from devices {fmt_ids(ids)} shuffled by {draw.how}{where} "
                   "with no seed shared by all processes (another process draws another order): "
                   "every process builds a different mesh and the first collective hangs until a "
                   "deadline error; do not shuffle devices, or permute them with a fixed seed shared "
                   "by all processes")
    raise ReshardError(message, code="RSH101", call="Mesh", target=ids, location=here)
