"""How the user's code ordered the devices it hands to ``Mesh(...)``. Pure Python, no jax.

A mesh built from a list compares with a builder's mesh (``jax.make_mesh``) differently on
each platform, and which way depends on how the list was made, which the run itself cannot
show: on this CPU run ``sorted(jax.devices(), key=lambda d: d.id)`` and ``jax.devices()``
are one order, on multi-host TPU two. So the devices argument of the ``Mesh(...)`` call is
read from the source (``_sites``: the frame's call, names bound once in the same function
or module) and sorted into one of two recipes whose order on any platform is known:

- ``POSITIONAL``: built from ``jax.devices()`` by moves of positions alone (``np.array``,
  ``reshape``, ``.T``, ``reversed``, ``[::-1]``, rotations ``d[k:] + d[:k]``, ``np.roll``,
  indexing by numbers, comprehensions over those): the same positions of ``jax.devices()``
  on every platform, whatever the numbers (config values included) are;
- ``ID_SORTED``: ``sorted(<positional>, key=lambda d: d.id)`` (or ``attrgetter("id")``),
  kept as it is by ``np.array`` / ``list`` / ``reshape``: the same devices, in each
  platform's id order.

Anything else (a read of a device attribute such as ``d.id`` or ``d.process_index``
elsewhere, a sort by another key, a call of the user's function, a parameter holding
devices, a name bound twice) is unknown, and an unknown mesh is judged on this run only.
"""

from __future__ import annotations

import ast
from types import FrameType
from typing import Any, Callable, Optional

from . import _sites

POSITIONAL = "positional"
ID_SORTED = "id-sorted"

# Attributes of a device that differ by platform: reading one makes an order platform-dependent.
DEVICE_ATTRIBUTES = frozenset({"id", "process_index", "coords", "core_on_chip", "slice_index",
                               "platform", "device_kind", "host_id", "client", "local_hardware_id",
                               "task_id"})
# Calls that keep the flat order of the devices they are given.
_KEEP = frozenset({"array", "asarray", "list", "tuple", "reshape", "ravel", "flatten", "tolist",
                   "copy", "squeeze", "expand_dims", "atleast_1d", "atleast_2d"})
# Calls that move positions only.
_MOVE = frozenset({"reversed", "flip", "fliplr", "flipud", "roll", "transpose", "swapaxes",
                   "moveaxis", "rot90", "concatenate", "stack", "hstack", "vstack", "take"})
_DEPTH = 8
_MISSING = object()

# (func_expr, frame) -> whether it is JAX's jax.devices (evaluated in the frame)
IsDevices = Callable[[ast.expr, FrameType], bool]
Recipe = Optional[tuple[str, str]]  # (POSITIONAL or ID_SORTED, how it is spelled)


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _id_key(call: ast.Call) -> bool:
    """``key=lambda d: d.id`` or ``key=operator.attrgetter("id")``."""
    key = next((k.value for k in call.keywords if k.arg == "key"), None)
    if isinstance(key, ast.Lambda) and len(key.args.args) == 1 and isinstance(key.body, ast.Attribute):
        body = key.body
        return body.attr == "id" and isinstance(body.value, ast.Name) \
            and body.value.id == key.args.args[0].arg
    if isinstance(key, ast.Call) and _call_name(key.func) == "attrgetter" and len(key.args) == 1:
        arg = key.args[0]
        return isinstance(arg, ast.Constant) and arg.value == "id" and not key.keywords
    return False


class _Reader:
    def __init__(self, info: Any, frame: FrameType, is_devices: IsDevices) -> None:
        self.info = info
        self.frame = frame
        self.is_devices = is_devices
        self.comprehension_devices: set[str] = set()  # names a comprehension binds to devices

    # ---------------------------------------------------------------- data (numbers, shapes)

    def data(self, node: ast.AST, scope: ast.AST, depth: int) -> bool:
        """Whether ``node`` (an index, a shape, a count) is the same on every platform: it reads
        no device attribute, and the names in it, where bound once, are bound to such values
        (a count of devices, ``len(devs)``, is)."""
        if depth > _DEPTH:
            return False
        if isinstance(node, ast.Call) and _call_name(node.func) == "len":
            return True
        if isinstance(node, ast.Attribute) and node.attr in DEVICE_ATTRIBUTES:
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in self.comprehension_devices:
                return False
            bound = _sites.bound_value(self.info, scope, node.id, self.frame)
            return bound is None or self.data(bound[0], bound[1], depth + 1)
        if isinstance(node, ast.Call) and self.is_devices(node.func, self.frame):
            return False  # devices where a number is expected: not a position
        return all(self.data(child, scope, depth) for child in ast.iter_child_nodes(node))

    # ---------------------------------------------------------------- device lists

    def devices(self, node: ast.expr, scope: ast.AST, depth: int) -> str | None:
        """POSITIONAL, ID_SORTED or None for an expression that evaluates to devices."""
        if depth > _DEPTH:
            return None
        if isinstance(node, ast.Name):
            if node.id in self.comprehension_devices:
                return POSITIONAL
            bound = _sites.bound_value(self.info, scope, node.id, self.frame)
            return self.devices(bound[0], bound[1], depth + 1) if bound is not None else None
        if isinstance(node, ast.Attribute) and node.attr == "T":
            return self._moved(self.devices(node.value, scope, depth + 1))
        if isinstance(node, ast.Subscript):
            if not self.data(node.slice, scope, depth + 1):
                return None
            return self._moved(self.devices(node.value, scope, depth + 1))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.devices(node.left, scope, depth + 1)
            right = self.devices(node.right, scope, depth + 1)
            return POSITIONAL if left == right == POSITIONAL else None
        if isinstance(node, (ast.List, ast.Tuple)):
            parts = [self.devices(e.value if isinstance(e, ast.Starred) else e, scope, depth + 1)
                     for e in node.elts]
            return POSITIONAL if parts and all(p == POSITIONAL for p in parts) else None
        if isinstance(node, ast.ListComp):
            return self._comprehension(node, scope, depth)
        if isinstance(node, ast.Call):
            return self._call(node, scope, depth)
        return None

    @staticmethod
    def _moved(inner: str | None) -> str | None:
        # A move of positions keeps a positional list positional; it makes an id-sorted one
        # a mixture this module does not follow.
        return POSITIONAL if inner == POSITIONAL else None

    def _comprehension(self, node: ast.ListComp, scope: ast.AST, depth: int) -> str | None:
        added: list[str] = []
        try:
            for gen in node.generators:
                if gen.is_async or not isinstance(gen.target, ast.Name):
                    return None
                over = self.devices(gen.iter, scope, depth + 1)
                if over == POSITIONAL:
                    self.comprehension_devices.add(gen.target.id)
                    added.append(gen.target.id)
                elif over is not None or not self.data(gen.iter, scope, depth + 1):
                    return None
                if not all(self.data(test, scope, depth + 1) for test in gen.ifs):
                    return None
            return self._moved(self.devices(node.elt, scope, depth + 1))
        finally:
            for name in added:
                self.comprehension_devices.discard(name)

    def _call(self, node: ast.Call, scope: ast.AST, depth: int) -> str | None:
        if self.is_devices(node.func, self.frame):
            constant = all(isinstance(a, ast.Constant) for a in node.args) and \
                all(isinstance(k.value, ast.Constant) for k in node.keywords)
            return POSITIONAL if constant else None
        name = _call_name(node.func)
        if name == "sorted" and len(node.args) == 1 and _id_key(node) and self._library_function(node.func) \
                and all(k.arg in ("key", "reverse") for k in node.keywords) \
                and not any(k.arg == "reverse" for k in node.keywords):
            return ID_SORTED if self.devices(node.args[0], scope, depth + 1) == POSITIONAL else None
        if name not in _KEEP and name not in _MOVE:
            return None
        # A method (x.reshape(...)) works on its receiver; a function (np.array(x, ...)) on
        # its first argument, and must be numpy's or a builtin; the other arguments numbers.
        method = isinstance(node.func, ast.Attribute) and not self._is_module(node.func.value)
        if not method and not self._library_function(node.func):
            return None
        if method:
            assert isinstance(node.func, ast.Attribute)
            sources: list[ast.expr] = [node.func.value]
            rest = [*node.args, *(k.value for k in node.keywords)]
        elif name in ("concatenate", "stack", "hstack", "vstack") and node.args:
            sources = [node.args[0]]
            rest = [*node.args[1:], *(k.value for k in node.keywords)]
        elif node.args:
            sources = [node.args[0]]
            rest = [*node.args[1:], *(k.value for k in node.keywords if k.arg != "dtype")]
        else:
            return None
        if not all(self.data(r, scope, depth + 1) for r in rest):
            return None
        inner = self.devices(sources[0], scope, depth + 1)
        return inner if name in _KEEP else self._moved(inner)

    def _library_function(self, func: ast.expr) -> bool:
        """``np.array``, ``list``, ``reversed`` ...: numpy's or a builtin, in the frame."""
        parts: list[str] = []
        node = func
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        value = self.frame.f_locals.get(node.id, self.frame.f_globals.get(node.id, _MISSING))
        if value is _MISSING:
            builtins = self.frame.f_builtins
            value = builtins.get(node.id, _MISSING)
        for attr in reversed(parts):
            value = getattr(value, attr, _MISSING)
        module = getattr(value, "__module__", None) or ""
        return value is not _MISSING and (module == "builtins" or module.startswith("numpy"))

    def _is_module(self, node: ast.expr) -> bool:
        """``np`` in ``np.array(...)``: a module, not a device array with a method."""
        if not isinstance(node, ast.Name):
            return False
        value = self.frame.f_locals.get(node.id, self.frame.f_globals.get(node.id))
        return type(value).__name__ == "module" or value is __builtins__


_cache: dict[tuple[Any, int], Recipe] = {}


def forget() -> None:
    _cache.clear()


def mesh_recipe(frame: FrameType, is_devices: IsDevices) -> Recipe:
    """How the devices argument of the ``Mesh(...)`` call running in ``frame`` was ordered:
    (POSITIONAL or ID_SORTED, the argument as spelled), or None when unknown."""
    key = (frame.f_code, frame.f_lasti)
    if key in _cache:
        return _cache[key]
    found: Recipe = None
    located = _sites.call_at(frame)
    if located is not None:
        info, call = located
        expr = _sites.argument(call, 0, "devices")
        if expr is not None:
            kind = _Reader(info, frame, is_devices).devices(expr, _sites.scope_of(info, call), 0)
            if kind is not None:
                found = (kind, ast.unparse(expr))
    if len(_cache) > 4096:
        _cache.clear()
    _cache[key] = found
    return found
