"""A concrete device array: what a device list evaluates to on one model topology.

NumPy's indexing, reshapes, transposes, flips and rolls on a tuple of device ids, enough
to follow what programs do to ``jax.devices()`` before building a mesh.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Iterable, Sequence


class ModelError(Exception):
    """The program cannot run on this model topology (e.g. a reshape that does not fit)."""


class Undecided(ModelError):
    """The program runs on this topology but the linter cannot tell its devices.

    Unlike a program that cannot run here (skipped), this makes every comparison with
    the list unknown: ``make_mesh((4,), devices=<shuffled>)`` on eight devices.
    """


@dataclass(frozen=True)
class DevArr:
    """A concrete numpy-like array (or list) of device ids.

    ``order`` is empty when ``flat`` is the order; otherwise only the set of devices is
    known, and ``flat`` holds them in a stand-in order: a mesh builder's order of a part of
    a TPU job (devices.builder_order). The token names the order: two arrays with one token
    and one set hold it in one order (the same builder, shape and steps since), else which
    order is not known. Steps that keep the set (a reshape, a transpose, a flip, a full
    slice) extend the token; steps that pick some devices by position (an index, a part)
    cannot tell which, and raise ``Undecided``.
    """

    flat: tuple[int, ...]
    shape: tuple[int, ...]
    is_list: bool = False  # a Python list: '+' concatenates
    order: str = ""

    @staticmethod
    def of(ids: Sequence[int], is_list: bool = True) -> "DevArr":
        return DevArr(tuple(ids), (len(ids),), is_list)

    def _then(self, step: str) -> str:
        """The order token after ``step``, a change of order that keeps the set."""
        return f"{self.order}|{step}" if self.order else ""

    def _positions(self, what: str) -> None:
        """Picking devices by position needs the order."""
        if self.order:
            raise Undecided(f"{what} of devices in an order the analysis does not know")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def as_array(self) -> "DevArr":
        return DevArr(self.flat, self.shape, False, self.order)

    def as_list(self) -> "DevArr":
        if self.ndim != 1:
            raise ModelError("list() of a multi-dimensional device array")
        return DevArr(self.flat, self.shape, True, self.order)

    def reshape(self, shape: Sequence[int]) -> "DevArr":
        dims = list(shape)
        if dims.count(-1) > 1:
            raise ModelError("two -1 in reshape")
        if -1 in dims:
            known = math.prod(d for d in dims if d != -1)
            if known <= 0 or len(self.flat) % known:
                raise ModelError("reshape does not fit")
            dims[dims.index(-1)] = len(self.flat) // known
        if math.prod(dims) != len(self.flat) or any(d < 0 for d in dims):
            raise ModelError("reshape does not fit")
        return DevArr(self.flat, tuple(dims), False, self.order)

    def _nested_index(self, idx: Sequence[int]) -> int:
        pos = 0
        for i, d in zip(idx, self.shape):
            pos = pos * d + i
        return self.flat[pos]

    def _all_indices(self, shape: Sequence[int]) -> Iterable[tuple[int, ...]]:
        if not shape:
            yield ()
            return
        for i in range(shape[0]):
            for rest in self._all_indices(shape[1:]):
                yield (i,) + rest

    def transpose(self, axes: Sequence[int] | None = None) -> "DevArr":
        nd = self.ndim
        perm = list(range(nd))[::-1] if axes is None else [a % nd if nd else 0 for a in axes]
        if sorted(perm) != list(range(nd)):
            raise ModelError("bad transpose axes")
        new_shape = tuple(self.shape[a] for a in perm)
        flat = []
        for new_idx in self._all_indices(new_shape):
            old = [0] * nd
            for k, a in enumerate(perm):
                old[a] = new_idx[k]
            flat.append(self._nested_index(old))
        return DevArr(tuple(flat), new_shape, False, self._then(f"T{perm}"))

    def swapaxes(self, a: int, b: int) -> "DevArr":
        nd = self.ndim
        if not nd:
            raise ModelError("swapaxes of a scalar")
        perm = list(range(nd))
        perm[a % nd], perm[b % nd] = perm[b % nd], perm[a % nd]
        return self.transpose(perm)

    def moveaxis(self, src: int, dst: int) -> "DevArr":
        nd = self.ndim
        if not nd:
            raise ModelError("moveaxis of a scalar")
        perm = list(range(nd))
        axis = perm.pop(src % nd)
        perm.insert(dst % nd, axis)
        return self.transpose(perm)

    def flip(self, axis: int | None = None) -> "DevArr":
        if axis is None:
            return DevArr(self.flat[::-1], self.shape, self.is_list, self._then("flip"))
        nd = self.ndim
        if not nd:
            raise ModelError("flip of a scalar")
        axis %= nd
        flat = []
        for idx in self._all_indices(self.shape):
            src = list(idx)
            src[axis] = self.shape[axis] - 1 - src[axis]
            flat.append(self._nested_index(src))
        return DevArr(tuple(flat), self.shape, self.is_list, self._then(f"flip{axis}"))

    def roll(self, shift: int, axis: int | None = None) -> "DevArr":
        if axis is None or self.ndim == 1:
            if not self.flat:
                return self
            s = shift % len(self.flat)
            flat = self.flat[-s:] + self.flat[:-s] if s else self.flat
            return DevArr(flat, self.shape, self.is_list, self._then(f"roll{s}"))
        nd = self.ndim
        axis %= nd
        rolled: list[int] = []
        for idx in self._all_indices(self.shape):
            src = list(idx)
            src[axis] = (src[axis] - shift) % self.shape[axis]
            rolled.append(self._nested_index(src))
        return DevArr(tuple(rolled), self.shape, self.is_list, self._then(f"roll{shift},{axis}"))

    def rows(self) -> list["DevArr"]:
        if not self.ndim:
            raise ModelError("index into a single device")
        inner = math.prod(self.shape[1:])
        return [DevArr(self.flat[i * inner:(i + 1) * inner], self.shape[1:], self.is_list)
                for i in range(self.shape[0])]

    def slice0(self, start: int | None, stop: int | None, step: int | None) -> "DevArr":
        if step == 0:
            raise ModelError("slice step 0")
        rows = self.rows()
        picked = rows[slice(start, stop, step)]
        if self.order and len(picked) != len(rows):
            self._positions("a part")
        flat = tuple(i for r in picked for i in r.flat)
        return DevArr(flat, (len(picked),) + self.shape[1:], self.is_list,
                      self._then(f"[{start}:{stop}:{step}]"))

    def index0(self, i: int) -> "DevArr":
        self._positions("an element")
        rows = self.rows()
        if not -len(rows) <= i < len(rows):
            raise ModelError("index out of range")
        return rows[i]

    def getitem(self, key: Sequence[int | slice]) -> "DevArr":
        """NumPy basic indexing with one int or slice per leading axis (``grid[:, 0]``).

        An int drops its axis, a slice keeps it; axes past the key are kept whole. Every
        axis indexed by an int gives a single device (shape ``()``).
        """
        if len(key) > self.ndim:
            raise ModelError("too many indices for the device array")
        self._positions("a part")
        picks: list[list[int]] = []
        shape: list[int] = []
        for k, d in zip(key, self.shape):
            if isinstance(k, slice):
                if k.step == 0:
                    raise ModelError("slice step 0")
                r = list(range(d))[k]
                picks.append(r)
                shape.append(len(r))
            else:
                if not -d <= k < d:
                    raise ModelError("index out of range")
                picks.append([k % d])
        for d in self.shape[len(key):]:
            picks.append(list(range(d)))
            shape.append(d)

        def walk(axis: int, prefix: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
            if axis == len(picks):
                yield prefix
                return
            for i in picks[axis]:
                yield from walk(axis + 1, prefix + (i,))

        flat = tuple(self._nested_index(idx) for idx in walk(0, ()))
        return DevArr(flat, tuple(shape), self.is_list and len(shape) == 1)

    def ravel(self) -> "DevArr":
        return DevArr(self.flat, (len(self.flat),), False, self.order)

    def concat(self, other: "DevArr") -> "DevArr":
        self._positions("a concatenation")
        other._positions("a concatenation")
        if self.ndim != 1 or other.ndim != 1:
            raise ModelError("concatenation of multi-dimensional device arrays")
        return DevArr(self.flat + other.flat, (len(self.flat) + len(other.flat),), self.is_list)

    def permuted(self, token: str) -> "DevArr":
        """A fixed, token-dependent permutation along the first axis.

        Stands for a permutation the linter cannot compute (a seeded RNG, a set's
        iteration order): the same token gives the same order, different tokens give
        different orders, and the set of devices is kept.
        """
        rows = self.rows()
        order = list(range(len(rows)))
        rnd = random.Random(token)
        for _ in range(8):
            rnd.shuffle(order)
            if len(order) < 2 or order != sorted(order):
                break
        picked = [rows[i] for i in order]
        flat = tuple(i for r in picked for i in r.flat)
        return DevArr(flat, self.shape, self.is_list, self._then(f"permuted{token}"))

    def sorted_by_id(self, reverse: bool = False) -> "DevArr":
        return DevArr(tuple(sorted(self.flat, reverse=reverse)), (len(self.flat),), True)
