"""Device lists evaluated on model topologies.

A device list in the source (``jax.devices()[::-1]``, ``mesh.devices.T``, a shuffled
copy ...) is kept as a function from a *model topology* to a concrete array of device
ids. Comparing two lists means evaluating both on several topologies (device counts,
devices per process, which process we are, the platform: docs/platforms.md) and keeping
a verdict only where the topologies that can run both agree. A list that cannot be decided (``[:n]`` with an
unknown ``n``, a filter) carries a token that makes comparisons with anything else
``unknown``, and unknown never fires.
"""

from __future__ import annotations

import functools

import random
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Sequence, TypeVar

from .devarray import DevArr, ModelError, Undecided

__all__ = ["DevArr", "ModelError", "Undecided", "Model", "Evaluator", "PLATFORMS", "builder_order", "every_device",
           "natural", "local", "models_for", "layouts", "Verdict", "DevFn"]

Verdict = Literal["same", "reordered", "different", "unknown"]
T = TypeVar("T")

# Device ids of an explicitly named platform live in their own range, so that
# jax.devices('cpu') and jax.devices('gpu') are disjoint in every model.
_PLATFORM_BASE = {"cpu": 100_000, "gpu": 200_000, "cuda": 200_000, "rocm": 200_000, "tpu": 300_000}


PLATFORMS = ("tpu", "gpu", "cpu")

# A topology's verdict where the two lists hold one set and the order of one of them is
# not known (DevArr.order): no verdict, but no other set either.
SAME_SET = "same set"


@dataclass(frozen=True)
class Model:
    n: int  # devices in the job
    per_process: int  # devices per process
    proc: int  # the process evaluating the program
    # The platform the job runs on (docs/platforms.md). ``scattered`` ids: a device's id
    # is not its enumeration position, as on multi-host TPU, where ids follow physical
    # coordinates while jax.devices() lists process by process.
    platform: str = "cpu"
    scattered: bool = False

    @property
    def processes(self) -> int:
        return self.n // self.per_process

    def process_of(self, device_id: int) -> int:
        local = device_id % 100_000
        if self._grid:
            return (local % (2 * self.processes)) // 2
        return local // self.per_process

    @property
    def _grid(self) -> bool:
        return self.scattered and self.per_process % 2 == 0 and self.processes >= 2

    def enumeration(self) -> tuple[int, ...]:
        """Device ids in ``jax.devices()`` order: process by process.

        Scattered ids lay the chips out as hosts of 2 x (per_process / 2) chips side by
        side on a 2 * processes wide grid, numbered row by row, so two hosts of four
        enumerate as 0, 1, 4, 5, 2, 3, 6, 7: the multi-host TPU order of keras#19968.
        """
        return _enumeration(self.n, self.per_process, self._grid)


@functools.lru_cache(maxsize=None)
def _enumeration(n: int, per_process: int, grid: bool) -> tuple[int, ...]:
    # A handful of model sizes, asked for on every device list of every file.
    if not grid:
        return tuple(range(n))
    processes = n // per_process
    width, rows = 2 * processes, per_process // 2
    return tuple(x + width * y for p in range(processes)
                 for x, y in sorted(((x, y) for y in range(rows) for x in (2 * p, 2 * p + 1)),
                                    key=lambda c: c[0] + width * c[1]))


def layouts(platforms: Iterable[str]) -> tuple[tuple[str, bool], ...]:
    """(platform, scattered) pairs to evaluate on.

    TPU ids are scattered on several hosts. On GPU they may or may not be (multi-slice
    systems number devices by topology, single-slice ones by process: the comment in
    create_device_mesh), so GPU takes both and a verdict that depends on it is unknown.
    """
    out: list[tuple[str, bool]] = []
    for p in PLATFORMS:
        if p in platforms:
            out.extend({"tpu": [("tpu", True)], "gpu": [("gpu", False), ("gpu", True)],
                        "cpu": [("cpu", False)]}[p])
    return tuple(out)


def models_for(sizes: Iterable[int], platforms: Iterable[str] = ("cpu",)) -> tuple[Model, ...]:
    """Topologies to try: a few multi-host sizes, plus sizes the program spells out.

    A literal mesh shape such as ``reshape(2, 4)`` or ``make_mesh((4,), ...)`` only runs
    on its own device count; including it keeps such programs decidable, and a verdict
    that flips with the device count becomes unknown instead of a false alarm.
    """
    ns = {8, 16, 64}
    ns.update(s for s in sizes if 2 <= s <= 4096)
    out: list[Model] = []
    for n in sorted(ns):
        per_options = {p for p in (4, n // 2) if p >= 1 and n % p == 0 and n // p >= 2}
        for per in sorted(per_options):
            procs = n // per
            for proc in sorted({0, procs - 1}):
                for platform, scattered in layouts(platforms):
                    out.append(Model(n, per, proc, platform, scattered))
    return tuple(out)


def every_device(fn: DevFn) -> bool:
    """Does the list hold every device of the job, on each of the standard topologies?
    Only then does a literal shape laid over it fix the job's device count: a reshape of
    ``devs[:4]`` to ``(2, 2)`` runs on a job of any size (a part of it)."""
    for model in models_for(()):
        try:
            arr = fn(model)
        except (ModelError, IndexError, ValueError, ZeroDivisionError, TypeError, RecursionError):
            return False
        if len(arr.flat) != model.n:
            return False
    return True


def builder_order(ids: Sequence[int], shape: Sequence[int], model: Model) -> DevArr:
    """What ``mesh_utils.create_device_mesh(shape, devices=ids)`` returns on the model's platform.

    jax/_src/mesh_utils.py (0.10.2) ``create_device_mesh``: TPU builds a physical mesh
    from each device's ``coords`` (``_get_physical_tpu_mesh``) and lays the requested
    shape over it, GPU returns ``sorted(devices, key=lambda d: d.id)``, CPU
    ``np.asarray(devices).reshape(shape)``. On TPU the order depends on the set of devices
    and on the shape without its size-1 axes, never on the order they were given in
    (tests/platforms check this on mock TPU v4 and v5e topologies); the model stands for
    it with a fixed permutation of the sorted ids per shape, so two builders with the same
    shape agree and two with different shapes, or a builder and ``jax.devices()``, do not.
    """
    if model.platform == "gpu":
        ids = sorted(ids)
    elif model.platform == "tpu":
        key = tuple(int(d) for d in shape if d != 1)
        if len(key) > 2:
            # Splitting a torus axis over three mesh axes can give the order of a 2-D
            # shape (v5e 4x4: (2, 2, 4) is (4, 4)): no claim either way.
            raise Undecided("a 3-D mesh shape on TPU")
        if len(set(ids)) < model.n:
            # Part of the job's devices: JAX lays them out by their coordinates too (or
            # refuses), in an order that depends on the set and the shape only, but is
            # sometimes the order by id (tests/platforms): the set is known, the order is
            # not, but for the same set and shape.
            return DevArr(tuple(sorted(ids)), tuple(shape), False, f"tpu-builder{key}")
        order = sorted(ids)
        rnd = random.Random(f"tpu-topology{key}")
        for _ in range(8):
            rnd.shuffle(order)
            if len(order) < 3 or order != sorted(order):
                break
        ids = order
    return DevArr(tuple(ids), tuple(shape), False)


def natural(model: Model, platform: str | None = None) -> DevArr:
    """``jax.devices(platform)``: the job's devices in enumeration order."""
    base = _PLATFORM_BASE.get(platform or "", 0)
    return DevArr.of([base + i for i in model.enumeration()])


def local(model: Model, platform: str | None = None) -> DevArr:
    start = model.proc * model.per_process
    return DevArr.of(natural(model, platform).flat[start:start + model.per_process])


DevFn = Callable[[Model], DevArr]


_UNDECIDED = DevArr((), (0,))


def _eval(fn: DevFn, model: Model, cache: dict[tuple[int, Model], DevArr | None]) -> DevArr | None:
    key = (id(fn), model)
    if key not in cache:
        try:
            cache[key] = fn(model)
        except Undecided:
            cache[key] = _UNDECIDED
        except (ModelError, IndexError, ValueError, ZeroDivisionError, TypeError, RecursionError):
            cache[key] = None
    return cache[key]


class Evaluator:
    """Evaluates device functions on models of the target platforms, with a per-file cache."""

    def __init__(self, platforms: Iterable[str] = PLATFORMS) -> None:
        self.platforms = tuple(p for p in PLATFORMS if p in set(platforms)) or PLATFORMS
        self._cache: dict[tuple[int, Model], DevArr | None] = {}
        # Keep the functions alive so that id() keys stay unique for the file.
        self._alive: list[DevFn] = []

    def run(self, fn: DevFn, model: Model) -> DevArr | None:
        out = self._run(fn, model)
        return None if out is _UNDECIDED else out

    def undecided(self, fn: DevFn, model: Model) -> bool:
        """The analysis cannot tell the list on this topology (``run`` gives None for that
        and for a topology where building it raises)."""
        return self._run(fn, model) is _UNDECIDED

    def _run(self, fn: DevFn, model: Model) -> DevArr | None:
        self._alive.append(fn)
        return _eval(fn, model, self._cache)

    def models(self, sizes: Iterable[int]) -> tuple[Model, ...]:
        return models_for(sizes, self.platforms)

    def observe(self, fn: DevFn, sizes: Iterable[int], probe: Callable[[DevArr], T]) -> set[T]:
        """``probe`` of the list on every topology that can run it."""
        return {probe(arr) for m in self.models(sizes) if (arr := self.run(fn, m)) is not None}

    def by_platform(self, a: DevFn, b: DevFn, sizes: Iterable[int] = (),
                    counts: Iterable[int] | None = None) -> dict[str, set[str]]:
        """The verdicts on each target platform's topologies that can run both lists
        (only those with ``counts`` devices when given)."""
        out: dict[str, set[str]] = {p: set() for p in self.platforms}
        wanted = None if counts is None else set(counts)
        for model in self.models(sizes):
            if wanted is not None and model.n not in wanted:
                continue
            x, y = self._run(a, model), self._run(b, model)
            if x is None or y is None:
                continue
            if x is _UNDECIDED or y is _UNDECIDED:
                out[model.platform].add("unknown")
            elif x.order or y.order:
                # A known set in an order the analysis does not know (DevArr.order): other
                # devices, or one order named alike, or no verdict.
                if len(x.flat) != len(y.flat) or set(x.flat) != set(y.flat):
                    out[model.platform].add("different")
                else:
                    out[model.platform].add("same" if x.order == y.order and x.flat == y.flat else SAME_SET)
            elif x.flat == y.flat:
                out[model.platform].add("same")
            elif set(x.flat) == set(y.flat) and len(x.flat) == len(y.flat):
                out[model.platform].add("reordered")
            else:
                out[model.platform].add("different")
        return out

    def verdicts(self, a: DevFn, b: DevFn, sizes: Iterable[int] = ()) -> set[str]:
        """The verdict on every topology that can run both lists."""
        if a is b:
            return {"same"}
        return set().union(*self.by_platform(a, b, sizes).values())

    @staticmethod
    def _combine(found: dict[str, set[str]]) -> Verdict:
        found = {p: {"unknown" if v == SAME_SET else v for v in vs} for p, vs in found.items()}
        every = set().union(*found.values())
        if len(every) == 1:
            return every.pop()  # type: ignore[return-value]  # (the sets hold verdicts)
        if "different" not in every and any(v == {"reordered"} for v in found.values()):
            return "reordered"
        if every <= {"different", "unknown"} and any(v == {"different"} for v in found.values()):
            # Another set on every topology of some platform and nowhere the same devices
            # (a filter by id, which CPU's numbering leaves undecided): on that platform
            # the move crosses; the verdict names it (different_on).
            return "different"
        return "unknown"

    def _found(self, a: DevFn, b: DevFn, sizes: Iterable[int]) -> dict[str, set[str]]:
        """The verdicts that decide: first on the device counts the source spells out.

        ``jax.make_mesh((16,), ...)`` is written for sixteen devices; on sixty-four it is
        a subset, which is another bug. The program's own count decides when it decides.
        """
        sizes = tuple(sizes)
        spelled = {s for s in sizes if 2 <= s <= 4096}
        if spelled:
            found = self.by_platform(a, b, sizes, spelled)
            others = self.by_platform(a, b, sizes, {m.n for m in self.models(sizes)} - spelled)
            # Elsewhere a known other set (a subset), never an undecided one; or the
            # same set in an order the model does not know (a builder's order of part of
            # a TPU job), which the spelled count's verdict does not rest on either.
            if self._combine(found) != "unknown" and "unknown" not in set().union(*others.values()) \
                    and "same" not in set().union(*others.values()):
                return found
            # On another count than the program's own, a builder's order of part of the
            # job, which the model does not know, claims nothing either way.
            return {p: found[p] | (others[p] - {SAME_SET}) for p in found}
        return self.by_platform(a, b, sizes)

    def compare(self, a: DevFn, b: DevFn, sizes: Iterable[int] = ()) -> Verdict:
        """same, different (set), reordered (on some target platform) or unknown.

        Reordered needs one platform where every topology says so, and no topology of
        any platform that finds other devices; the platforms where the order is not
        decided (GPU ids that may follow processes or not) do not undo it.
        """
        if a is b:
            return "same"
        return self._combine(self._found(a, b, sizes))

    def different_on(self, a: DevFn, b: DevFn, sizes: Iterable[int] = ()) -> tuple[str, ...]:
        """The target platforms on which the two lists provably hold other devices."""
        found = self._found(a, b, sizes)
        return tuple(p for p in self.platforms if found[p] == {"different"})

    def reordered_on(self, a: DevFn, b: DevFn, sizes: Iterable[int] = ()) -> tuple[str, ...]:
        """The target platforms on which the two lists are provably in different orders."""
        found = self._found(a, b, sizes)
        return tuple(p for p in self.platforms if found[p] == {"reordered"})

    def same_layout_other_processes(self, a: DevFn, b: DevFn, sizes: Iterable[int] = ()) -> bool:
        """Same mesh shape on disjoint sets of processes, on some topology that runs both.

        JAX's experimental cross-host transfer takes such arrays (and moves them where the
        backend supports it or the transfer socket flag is set; CPU raises "does not support
        cross-host device transfers"), so on that topology the different-device-set error
        is not what happens: RSH201 says which error is.
        ``devs[:4]`` and ``devs[4:]`` are such a pair on two hosts of four devices.
        """
        for model in self.models(sizes):
            x, y = self.run(a, model), self.run(b, model)
            if x is None or y is None:
                continue
            px = {model.process_of(i) for i in x.flat}
            py = {model.process_of(i) for i in y.flat}
            if x.shape == y.shape and not px & py:
                return True
        return False

    def is_reordered(self, fn: DevFn, sizes: Iterable[int] = ()) -> bool:
        """True when, on every topology that runs it, the flattened order is not by id.

        Judged where enumeration is id order (CPU): how the platforms' builders order
        devices is the crossing rules' business, not a reordering written in the code.
        """
        seen = False
        for model in models_for(sizes):
            arr = self.run(fn, model)
            if arr is None:
                continue
            ids = list(arr.flat)
            if len(ids) < 2:
                return False
            if ids == sorted(ids):
                return False
            seen = True
        return seen

    def locality(self, fn: DevFn, sizes: Iterable[int] = ()) -> Literal["local", "global", "unknown"]:
        """'local': only this process's devices; 'global': several processes' devices."""
        verdicts: set[str] = set()
        for model in self.models(sizes):
            arr = self.run(fn, model)
            if arr is None or not arr.flat:
                continue
            procs = {model.process_of(i) for i in arr.flat}
            if procs == {model.proc}:
                verdicts.add("local")
            elif len(procs) > 1:
                verdicts.add("global")
            else:
                verdicts.add("other")
        if len(verdicts) == 1 and verdicts <= {"local", "global"}:
            return verdicts.pop()  # type: ignore[return-value]  # ("local" or "global": a verdict)
        return "unknown"
