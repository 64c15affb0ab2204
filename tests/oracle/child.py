"""The oracle's child process: runs programs under JAX on 8 CPU devices and records every
transfer site the programs reach.

Run as ``python -m tests.oracle.child JOB.json OUT.jsonl``. The job names a platform
mode and a list of programs (a file run as ``__main__``, or a module of a project run
as ``__main__`` with the project root on ``sys.path``). For each program one JSON line
is appended to OUT as soon as it finishes, so that a crash leaves the finished ones.

Recording works by wrapping JAX's public API functions in this process (identity
replacement in every public ``jax`` module, and ``numpy.asarray`` / ``numpy.array`` for
fetches) and the eager operators of ``ArrayImpl``. A call is recorded only when its
immediate caller is user code (a file under the program's root), with the file, line
and column (1-based, as flake8 prints it) of the call expression.

Errors that JAX raises on one process at a site (incompatible devices in ``jit``) are
recorded, and the call is repaired so that the program goes on: a jitted call whose
committed argument is on another device assignment than its ``in_shardings`` gets the
argument moved there first (the second such call would crash the process, SIGSEGV,
RUNTIME-FACTS.md), and a call that raises is retried with host copies of its arrays.

Platform modes ``tpu-v4`` and ``tpu-v5e`` run JAX's own TPU builder code
(``mesh_utils.create_device_mesh``, which ``jax.make_mesh`` calls) on mock TPU chips
whose ids are the CPU devices' ids (8 chips, 2 hosts enumerated host by host, so id
order is enumeration order there too) and hand back the real CPU devices in the order
the TPU code chose: the program then runs with the TPU device order.
"""

from __future__ import annotations

import os
import sys

# The flag first, nothing before it: chex.set_n_cpu_devices (called by projects' tests,
# tests/realsuites) reads the device count with re.match at the start of XLA_FLAGS.
_FLAGS = os.environ.get("XLA_FLAGS", "")
os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count=8 " + _FLAGS).strip()
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import functools  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec, Sharding  # noqa: E402

try:  # imported so that its functions are wrapped too
    from jax.experimental import mesh_utils, multihost_utils  # noqa: E402,F401
except Exception:  # pragma: no cover
    pass

from jax._src import core as _core  # noqa: E402
from jax._src import mesh as _mesh_lib  # noqa: E402
from jax._src import mesh_utils as _src_mesh_utils  # noqa: E402

ArrayImpl = type(jnp.zeros(1))
_REAL = {}  # name -> original function
ROOTS: list[str] = []  # roots of user code (absolute, with a trailing separator)
SITES: list[dict] = []
_POS_CACHE: dict = {}
_RECORDING = [True]
# Whether a call that raises is repaired so that the program goes on (one process shows
# every site); a real multi-controller run (tests/oracle/mc_child.py) turns it off.
REPAIR = [True]


# ---------------------------------------------------------------- placements

def _slices(idx, shape):
    out = []
    for s, n in zip(idx, shape):
        if isinstance(s, slice):
            a, b, c = s.indices(n)
            out.append([a, b, c])
        else:
            out.append([int(s), int(s) + 1, 1])
    return out


def owners(ids) -> dict:
    """The simulated processes that own these devices: the 8 CPU devices split into 2 or
    4 contiguous blocks, as JAX enumerates CPU processes."""
    return {str(n): sorted({i // (8 // n) for i in ids}) for n in (2, 4)}


def sharding_placement(s, shape=None) -> dict:
    try:
        devs = list(s._device_assignment)
    except Exception:
        try:
            devs = sorted(s.device_set, key=lambda d: d.id)
        except Exception:
            return {"k": "unknown", "type": type(s).__name__}
    rec = {"k": "sharding", "devices": [d.id for d in devs], "platform": devs[0].platform if devs else "",
           "type": type(s).__name__, "owners": owners([d.id for d in devs])}
    if isinstance(s, NamedSharding):
        rec["spec"] = str(s.spec)
    if shape is not None:
        try:
            m = s.devices_indices_map(tuple(shape))
            rec["indices"] = {str(d.id): _slices(i, shape) for d, i in m.items()}
            rec["shape"] = list(shape)
        except Exception as e:  # a spec that does not fit the shape
            rec["indices_error"] = type(e).__name__
    return rec


def _by_position(s, n, ndim):
    index = s.devices_indices_map((n,) * ndim)
    return [[list(sl.indices(n)[:2]) for sl in index[d]] for d in s.mesh.devices.flat]


def own_indices(a, t) -> dict | None:
    """The pieces the target's spec gives on the array's own mesh (by axis name when the
    spec names only axes of that mesh, whatever their sizes; else the array's own pieces when
    the two shardings lay it out alike position by position): what RSH202's claim is
    measured against. None when neither applies."""
    try:
        s = a.sharding
        if isinstance(t, PartitionSpec) and context_mesh() is not None:
            t = NamedSharding(context_mesh(), t)  # a spec under jax.set_mesh
        if not (isinstance(s, NamedSharding) and isinstance(t, NamedSharding)):
            return None
        used = set()
        for e in t.spec:
            used.update((e,) if isinstance(e, str) else tuple(e or ()))
        sm, tm = s.mesh, t.mesh
        n = sm.devices.size
        if used <= set(sm.axis_names):
            own = NamedSharding(sm, t.spec)
        elif n == tm.devices.size and _by_position(s, n, a.ndim) == _by_position(t, n, a.ndim):
            own = s  # the same layout position by position: the move only reorders it
        else:
            return None
        return {str(d.id): _slices(i, a.shape) for d, i in own.devices_indices_map(tuple(a.shape)).items()}
    except Exception:
        return None


def placement(v) -> dict:
    """Where a value lives: a committed or uncommitted array, host data, a tracer."""
    if isinstance(v, _core.Tracer):
        return {"k": "traced"}
    if isinstance(v, jax.Array):
        try:
            rec = sharding_placement(v.sharding, v.shape)
        except Exception:
            return {"k": "unknown", "type": type(v).__name__}
        rec["k"] = "array" if getattr(v, "_committed", True) else "uncommitted"
        return rec
    if isinstance(v, (np.ndarray, np.generic, int, float, complex, bool, list, tuple)) or v is None:
        return {"k": "host", "type": type(v).__name__}
    return {"k": "unknown", "type": type(v).__name__}


def context_mesh():
    try:
        m = _mesh_lib.get_concrete_mesh()
    except Exception:
        return None
    if m is None or getattr(m, "empty", False) or not getattr(m, "devices", np.array([])).size:
        return None
    return m


def target_placement(t, shape) -> dict:
    if t is None:
        return {"k": "none"}
    if isinstance(t, Sharding):
        return sharding_placement(t, shape)
    if isinstance(t, PartitionSpec):
        m = context_mesh()
        if m is None:
            return {"k": "spec-without-mesh"}
        rec = sharding_placement(NamedSharding(m, t), shape)
        rec["context"] = True
        return rec
    if hasattr(t, "id") and hasattr(t, "platform"):  # a Device
        return {"k": "device", "devices": [t.id], "platform": t.platform, "owners": owners([t.id])}
    if hasattr(t, "sharding") and isinstance(getattr(t, "sharding", None), Sharding):  # Format
        return sharding_placement(t.sharding, shape)
    return {"k": "unknown", "type": type(t).__name__}


# ---------------------------------------------------------------- callers

# JAX's pytree mapping, which calls a function the user handed it (``jax.tree.map(
# functools.partial(jax.device_put, device=s), tree)``): the user's call of the mapping
# is the site.
_MAPPERS = (os.path.join("jax", "_src", "tree_util.py"), os.path.join("jax", "_src", "tree.py"))


def _is_user(fn: str) -> bool:
    return any(fn.startswith(r) for r in ROOTS)


def user_frame(depth: int = 2):
    """The frame that called the wrapper, if it is user code (through JAX's tree mapping)."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    while f is not None and f.f_code.co_filename.endswith(_MAPPERS):
        f = f.f_back
    if f is not None and _is_user(f.f_code.co_filename):
        return f
    return None


def user_stack(f) -> list:
    """[file, line] of the user frames from ``f`` outwards, innermost first: a label or a
    finding may sit on the line that calls the helper holding the site."""
    out = []
    while f is not None:
        if _is_user(f.f_code.co_filename):
            out.append([f.f_code.co_filename, f.f_lineno])
        f = f.f_back
    return out


def position(f) -> tuple[str, int, int]:
    code = f.f_code
    pos = _POS_CACHE.get(code)
    if pos is None:
        pos = _POS_CACHE[code] = list(code.co_positions())
    i = f.f_lasti // 2
    line, col = f.f_lineno, 0
    if 0 <= i < len(pos):
        p = pos[i]
        if p[0] is not None:
            line = p[0]
        if p[2] is not None:
            col = p[2]
    return code.co_filename, line, col + 1


def record(f, api: str, pairs: list, **extra) -> dict:
    path, line, col = position(f)
    rec = {"path": path, "line": line, "col": col, "api": api, "pairs": pairs, "stack": user_stack(f)}
    rec.update(extra)
    SITES.append(rec)
    return rec


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"


def _leaves(x):
    try:
        return jax.tree.leaves(x, is_leaf=lambda a: a is None)
    except Exception:
        return [x]


def _targets_for(x, t):
    """The target of each leaf of x: one sharding for all, or a pytree prefix."""
    leaves = _leaves(x)
    if t is None or isinstance(t, (Sharding, PartitionSpec)) or (hasattr(t, "id") and hasattr(t, "platform")):
        return leaves, [t] * len(leaves)
    try:
        treedef = jax.tree.structure(x)
        parts = treedef.flatten_up_to(t)
        out_x, out_t = [], []
        for sub, tt in zip(treedef.flatten_up_to(x), parts):
            ls = _leaves(sub)
            out_x += ls
            out_t += [tt] * len(ls)
        return out_x, out_t
    except Exception:
        return leaves, [object()] * len(leaves)


def _shape(v):
    s = getattr(v, "shape", None)
    try:
        return tuple(s) if s is not None else tuple(np.shape(v))
    except Exception:
        return None


def _host(v):
    if isinstance(v, jax.Array) and not isinstance(v, _core.Tracer):
        try:
            return np.asarray(jax.device_get(v))
        except Exception:
            return v
    return v


def _host_tree(x):
    return jax.tree.map(_host, x)


# ---------------------------------------------------------------- wrappers

def w_device_put(x, device=None, *args, **kw):
    f = user_frame()
    real = _REAL["device_put"]
    if f is None or not _RECORDING[0]:
        return real(x, device, *args, **kw)
    leaves, targets = _targets_for(x, device)
    pairs = [{"src": placement(a), "dst": target_placement(t, _shape(a)), "own": own_indices(a, t)}
             for a, t in zip(leaves, targets)]
    rec = record(f, "device_put", pairs, untargeted=device is None)
    try:
        out = real(x, device, *args, **kw)
    except Exception as e:
        rec["error"] = _err(e)
        raise
    outs = _leaves(out)
    if len(outs) == len(pairs):
        for p, o in zip(pairs, outs):
            p["out"] = placement(o)
    return out


def w_to_device(self, device, *args, **kw):
    f = user_frame()
    real = _REAL["to_device"]
    if f is None:
        return real(self, device, *args, **kw)
    rec = record(f, "to_device", [{"src": placement(self), "dst": target_placement(device, _shape(self)),
                                   "own": own_indices(self, device)}])
    try:
        return real(self, device, *args, **kw)
    except Exception as e:
        rec["error"] = _err(e)
        raise


def _constraint_like(name):
    def wrapper(x, shardings, *args, **kw):
        f = user_frame()
        real = _REAL[name]
        if f is None:
            return real(x, shardings, *args, **kw)
        leaves, targets = _targets_for(x, shardings)
        pairs = [{"src": placement(a), "dst": target_placement(t, _shape(a))} for a, t in zip(leaves, targets)]
        for p in pairs:
            if p["src"]["k"] == "traced":
                p["src"] = _traced_source()
        rec = record(f, name, pairs)
        try:
            return real(x, shardings, *args, **kw)
        except Exception as e:
            rec["error"] = _err(e)
            if not REPAIR[0] or any(p["src"]["k"] == "traced" for p in pairs):
                raise
            rec["repaired"] = True
            try:
                return _REAL["device_put"](_host_tree(x), shardings)
            except Exception:
                raise e
    wrapper.__name__ = name
    return wrapper


def w_asarray_jnp(a, *args, device=None, **kw):
    f = user_frame()
    real = _REAL["jnp_asarray"]
    if f is None or device is None or not isinstance(a, jax.Array):
        return real(a, *args, device=device, **kw)
    rec = record(f, "asarray", [{"src": placement(a), "dst": target_placement(device, _shape(a))}])
    try:
        return real(a, *args, device=device, **kw)
    except Exception as e:
        rec["error"] = _err(e)
        if not REPAIR[0]:
            raise
        rec["repaired"] = True
        return _REAL["device_put"](_host(a), device)


def _fetch(name):
    def wrapper(x, *args, **kw):
        real = _REAL[name]
        if isinstance(x, (np.ndarray, int, float, str)) or not _RECORDING[0]:
            return real(x, *args, **kw)
        f = user_frame()
        if f is not None and isinstance(x, jax.Array) or (f is not None and name == "device_get"):
            leaves = [a for a in _leaves(x) if isinstance(a, jax.Array)]
            if leaves:
                api = name if name == "device_get" else "np." + name
                rec = record(f, api, [{"src": placement(a), "dst": {"k": "host"}} for a in leaves])
                try:
                    return real(x, *args, **kw)
                except Exception as e:
                    rec["error"] = _err(e)
                    raise
        return real(x, *args, **kw)
    wrapper.__name__ = name
    return wrapper


def _assembly(name, sharding_pos):
    def wrapper(*args, **kw):
        f = user_frame()
        real = _REAL[name]
        if f is None:
            return real(*args, **kw)
        s = args[sharding_pos] if len(args) > sharding_pos else kw.get("sharding")
        srcs = []
        if name == "make_array_from_single_device_arrays":
            arrs = args[2] if len(args) > 2 else kw.get("arrays", [])
            srcs = [placement(a) for a in arrs]
        elif name == "make_array_from_process_local_data":
            data = args[1] if len(args) > 1 else kw.get("local_data")
            srcs = [placement(a) for a in _leaves(data)]
        elif name == "host_local_array_to_global_array":
            data = args[0] if args else kw.get("local_inputs")
            srcs = [placement(a) for a in _leaves(data)]
        else:
            srcs = [{"k": "host", "type": "callback"}]
        rec = record(f, name, [])
        try:
            out = real(*args, **kw)
        except Exception as e:
            rec["error"] = _err(e)
            dst = target_placement(s if not isinstance(s, Mesh) else NamedSharding(s, PartitionSpec()), None)
            rec["pairs"] = [{"src": sp, "dst": dst} for sp in srcs] or [{"src": {"k": "host"}, "dst": dst}]
            raise
        outs = _leaves(out)
        dst = placement(outs[0]) if outs else target_placement(s, None)
        rec["pairs"] = [{"src": sp, "dst": dst} for sp in srcs] or [{"src": {"k": "host"}, "dst": dst}]
        return out
    wrapper.__name__ = name
    return wrapper


_JIT_STACK: list[list[dict]] = []  # the concrete arguments of the jitted calls being run


def _traced_source() -> dict:
    """A traced value's placement: the devices of the enclosing jitted call's committed
    arguments, when they all agree (the computation runs there)."""
    for args in reversed(_JIT_STACK):
        devs = {tuple(a["devices"]) for a in args if a["k"] == "array"}
        if len(devs) == 1:
            d = next(iter(devs))
            return {"k": "traced", "devices": list(d), "via": "enclosing jit"}
        if devs:
            return {"k": "traced"}
    return {"k": "traced"}


class _Jitted:
    """A jitted function: records its calls when it has in_shardings or out_shardings,
    and keeps the placements of its arguments while it runs (for constraints traced
    inside it)."""

    def __init__(self, inner, in_s, out_s):
        self._inner, self._in, self._out = inner, in_s, out_s
        self._start = 0
        functools.update_wrapper(self, inner, updated=())

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def _in_targets(self, args):
        ins = self._in
        if ins is None or _is_unspecified(ins):
            return []
        out = []
        if isinstance(ins, (Sharding, PartitionSpec)):
            per = [ins] * len(args)
        elif isinstance(ins, (tuple, list)) and len(ins) == len(args):
            per = list(ins)
        elif len(args) == 1:
            per = [ins]
        else:
            return []
        for i, (a, t) in enumerate(zip(args, per)):
            if t is None or _is_unspecified(t):
                continue
            xs, ts = _targets_for(a, t)
            out += [(i, x, tt) for x, tt in zip(xs, ts) if tt is not None]
        return out

    def __call__(self, *args, **kw):
        _JIT_STACK.append([placement(a) for a in _leaves((args, kw)) if isinstance(a, jax.Array)])
        start = self._start = len(SITES)
        try:
            return self._call(*args, **kw)
        except Exception as e:
            _blame_traced(start, e)
            raise
        finally:
            _JIT_STACK.pop()

    def _call(self, *args, **kw):
        f = user_frame(3)
        if f is None:
            return self._inner(*args, **kw)
        pairs, outs = [], []
        moved = False
        arglist = list(args)
        for i, a, t in self._in_targets(args):
            if not isinstance(t, (Sharding, PartitionSpec)):
                continue
            src = placement(a)
            dst = target_placement(t, _shape(a))
            pairs.append({"src": src, "dst": dst, "arg": i})
            if (src["k"] == "array" and dst.get("devices") and src.get("devices") != dst.get("devices")
                    and sorted(src["devices"]) == sorted(dst["devices"])):
                moved = True  # another order of the same devices: the crash case
        if self._out is not None and not _is_unspecified(self._out):
            arr_src = [placement(a) for a in _leaves(args) if isinstance(a, jax.Array)]
            for t in _leaves(self._out):
                if isinstance(t, (Sharding, PartitionSpec)):
                    outs.append({"dst": target_placement(t, None), "srcs": arr_src})
        if not pairs and not outs:
            try:
                return self._inner(*args, **kw)
            except Exception as e:
                if not REPAIR[0]:
                    record(f, "jit-plain", [], error=_err(e))
                    raise
                if not any(isinstance(a, jax.Array) for a in _leaves((args, kw))):
                    raise
                # an error inside (a constraint to other devices): recorded, then the call
                # is repaired with host copies of its arguments
                _blame_traced(getattr(self, "_start", len(SITES)), e)
                rec = record(f, "jit-plain", [], error=_err(e), repaired=True)
                return self._inner(*[_host_tree(a) for a in args], **{k: _host_tree(v) for k, v in kw.items()})
        rec = record(f, "jit", pairs, outs=outs)
        if any(p["src"]["k"] == "traced" for p in pairs):
            return self._inner(*args, **kw)
        if moved and REPAIR[0]:
            # The same call a second time would crash the process (SIGSEGV): move the
            # arguments onto in_shardings first, which is what JAX does on the first call.
            rec["repaired"] = "in_shardings"
            arglist = [_REAL["device_put"](_host_tree(a), t) if _has_committed(a) else a
                       for a, t in zip(args, self._per_arg(args))]
        try:
            return self._inner(*arglist, **kw)
        except Exception as e:
            rec["error"] = _err(e)
            if not REPAIR[0]:
                raise
            rec["repaired"] = True
            try:
                return self._inner(*[_host_tree(a) for a in arglist], **{k: _host_tree(v) for k, v in kw.items()})
            except Exception:
                raise e

    def _per_arg(self, args):
        ins = self._in
        if isinstance(ins, (Sharding, PartitionSpec)):
            return [ins] * len(args)
        if isinstance(ins, (tuple, list)) and len(ins) == len(args):
            return list(ins)
        return [ins] if len(args) == 1 else [None] * len(args)


def _blame_traced(start: int, e: BaseException) -> None:
    """The constraints traced in a jitted call that raised: the call's error is theirs
    (JAX raises it at the call, not where the constraint is written)."""
    for rec in SITES[start:]:
        if rec["api"] in ("with_sharding_constraint", "reshard") and not rec.get("error") and \
                any(p["src"].get("k") == "traced" for p in rec["pairs"]):
            rec["error"] = _err(e) + " (raised by the enclosing jitted call)"


def _has_committed(a):
    return any(isinstance(x, jax.Array) and getattr(x, "_committed", False) for x in _leaves(a))


def _is_unspecified(v):
    return type(v).__name__ in ("UnspecifiedValue",)


def w_jit(fun=None, *args, **kw):
    real = _REAL["jit"]
    ins, outs = kw.get("in_shardings"), kw.get("out_shardings")
    if fun is None:  # jax.jit(in_shardings=...) as a decorator factory
        return lambda f: w_jit(f, *args, **kw)
    jitted = real(fun, *args, **kw)
    return _Jitted(jitted, ins, outs)


_BINOPS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__matmul__", "__rmatmul__", "__pow__", "__floordiv__", "__mod__")


def _binop(name):
    def wrapper(self, other):
        real = _REAL["binop" + name]
        if not isinstance(other, ArrayImpl) or not _RECORDING[0]:
            return real(self, other)
        f = user_frame()
        if f is None:
            return real(self, other)
        left, right = (other, self) if name.startswith("__r") else (self, other)
        rec = record(f, "binop", [{"src": placement(left), "dst": placement(right)}])
        try:
            return real(self, other)
        except Exception as e:
            rec["error"] = _err(e)
            if not REPAIR[0]:
                raise
            rec["repaired"] = True
            return jnp.asarray(getattr(np.asarray(_host(self)), name)(np.asarray(_host(other))))
    wrapper.__name__ = name
    return wrapper


# ---------------------------------------------------------------- TPU device orders

@dataclass(frozen=True)
class MockTPU:
    id: int
    process_index: int
    platform: str
    device_kind: str
    coords: tuple
    core_on_chip: int = 0
    slice_index: int = 0


def _mock_topology(mode: str) -> dict[int, MockTPU]:
    """{real CPU device id: mock device}."""
    if mode == "gpu-scattered":
        # 2 processes x 4 GPUs enumerated process by process, ids numbered by a global
        # topology (multi-slice): position k = p * 4 + local has id local * 2 + p
        return {k: MockTPU((k % 4) * 2 + k // 4, k // 4, "gpu", "NVIDIA H100 80GB HBM3", (0, 0, 0))
                for k in range(8)}
    if mode == "tpu-v4":  # 2x2x2, hosts of 2x2x1
        kind, (X, Y, Z), (bx, by, bz) = "TPU v4", (2, 2, 2), (2, 2, 1)
    else:  # tpu-v5e: 2x4x1, hosts of 2x2x1
        kind, (X, Y, Z), (bx, by, bz) = "TPU v5 lite", (2, 4, 1), (2, 2, 1)
    hx, hy = X // bx, Y // by
    out = {}
    for z in range(Z):
        for y in range(Y):
            for x in range(X):
                i = x + X * y + X * Y * z
                out[i] = MockTPU(i, (z // bz) * hx * hy + (y // by) * hx + x // bx, "tpu", kind, (x, y, z))
    return out


def install_process(index: int, count: int) -> None:
    """One of ``count`` simulated processes: ``jax.local_devices()`` is its contiguous block
    of the 8 devices, ``jax.process_index()`` its index. Only what the program reads
    through these functions changes; JAX itself still runs one process."""
    block = 8 // count
    real_local = jax.local_devices

    def local_devices(process_index=None, backend=None, host_id=None):
        devs = jax.devices(backend) if backend else jax.devices()
        p = index if process_index is None and host_id is None else (process_index if process_index is not None else host_id)
        return [d for d in devs if d.id // block == p]

    _swap(real_local, local_devices)
    _swap(jax.local_device_count, lambda *a, **k: block)
    _swap(jax.process_index, lambda *a, **k: index)
    _swap(jax.process_count, lambda *a, **k: count)


def install_platform(mode: str) -> None:
    if mode == "cpu":
        return
    if mode.startswith("proc"):  # proc1of2: simulated process 1 of 2
        i, n = mode[4:].split("of")
        install_process(int(i), int(n))
        return
    mocks = _mock_topology(mode)
    real_cdm = _src_mesh_utils.create_device_mesh

    def create_device_mesh(mesh_shape, devices=None, *args, **kw):
        devices = list(jax.devices() if devices is None else devices)
        try:
            mock = [mocks[d.id] for d in devices]
            real_of = {mocks[d.id].id: d for d in devices}
        except (KeyError, AttributeError):
            return real_cdm(mesh_shape, devices, *args, **kw)
        if mode == "tpu-v5e":
            kw["allow_split_physical_axes"] = True
        got = real_cdm(mesh_shape, mock, *args, **kw)
        return np.vectorize(lambda m: real_of[m.id], otypes=[object])(got)

    _src_mesh_utils.create_device_mesh = create_device_mesh
    _UNDO.append(lambda: setattr(_src_mesh_utils, "create_device_mesh", real_cdm))
    _swap(real_cdm, create_device_mesh)


_UNDO: list = []


def _swap(orig, new) -> None:
    """Replace ``orig`` by ``new`` in the public modules until ``uninstall_platform``."""
    _replace_everywhere(orig, new)
    _UNDO.append(lambda: _replace_everywhere(new, orig))


def uninstall_platform() -> None:
    while _UNDO:
        _UNDO.pop()()


# ---------------------------------------------------------------- installation

def _public_modules():
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "jax" or name.startswith("jax.")):
            continue
        if "._src" in name or name.startswith("jax._"):
            continue
        yield mod


def _replace_everywhere(orig, new) -> None:
    for mod in _public_modules():
        for attr, val in list(vars(mod).items()):
            if val is orig:
                try:
                    setattr(mod, attr, new)
                except Exception:
                    pass


def install() -> None:
    import jax.experimental.multihost_utils as mhu
    import jax.lax
    # One process stands for all: jax.distributed.initialize would fail after the
    # backend is up; the processes are simulated from the device ids instead.
    _replace_everywhere(jax.distributed.initialize, lambda *a, **k: None)
    table = {
        "device_put": (jax.device_put, w_device_put),
        "with_sharding_constraint": (jax.lax.with_sharding_constraint, _constraint_like("with_sharding_constraint")),
        "jit": (jax.jit, w_jit),
        "device_get": (jax.device_get, _fetch("device_get")),
        "make_array_from_callback": (jax.make_array_from_callback, _assembly("make_array_from_callback", 1)),
        "make_array_from_process_local_data": (jax.make_array_from_process_local_data,
                                               _assembly("make_array_from_process_local_data", 0)),
        "make_array_from_single_device_arrays": (jax.make_array_from_single_device_arrays,
                                                 _assembly("make_array_from_single_device_arrays", 1)),
        "host_local_array_to_global_array": (mhu.host_local_array_to_global_array,
                                             _assembly("host_local_array_to_global_array", 1)),
        "jnp_asarray": (jnp.asarray, w_asarray_jnp),
    }
    if hasattr(jax.sharding, "reshard"):
        table["reshard"] = (jax.sharding.reshard, _constraint_like("reshard"))
    for name, (orig, new) in table.items():
        _REAL[name] = orig
        _replace_everywhere(orig, new)
    # numpy fetches: the user's np.asarray(x) / np.array(x) of a jax.Array
    for name in ("asarray", "array"):
        orig = getattr(np, name)
        _REAL[name] = orig
        setattr(np, name, _fetch(name))
    _REAL["to_device"] = ArrayImpl.to_device
    ArrayImpl.to_device = w_to_device
    from .mc_child import install_recorders  # fetch methods, process_allgather, default_device

    install_recorders()
    for name in _BINOPS:
        if hasattr(ArrayImpl, name):
            _REAL["binop" + name] = getattr(ArrayImpl, name)
            setattr(ArrayImpl, name, _binop(name))


def install_transfer_recorders() -> None:
    """The ``device_put`` and ``to_device`` recorders alone, repairing nothing: for a run
    under real multi-controller JAX (tests/oracle/fixruns.py), where a move that crosses
    device sets must raise as it does for users. Installed once per process."""
    if "device_put" in _REAL:
        return
    _REAL["device_put"] = jax.device_put
    _replace_everywhere(jax.device_put, w_device_put)
    _REAL["to_device"] = ArrayImpl.to_device
    ArrayImpl.to_device = w_to_device


# ---------------------------------------------------------------- running programs

class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _purge(root: str) -> None:
    for name, mod in list(sys.modules.items()):
        fn = getattr(mod, "__file__", None) or ""
        if fn.startswith(root):
            del sys.modules[name]


def _error_stack(tb) -> list:
    """[file, line] of the user frames of a traceback, innermost first."""
    return [[fr.f_code.co_filename, line] for fr, line in traceback.walk_tb(tb)
            if _is_user(fr.f_code.co_filename)][::-1]


def run_program(prog: dict) -> dict:
    root = os.path.abspath(prog["root"]).rstrip(os.sep) + os.sep
    ROOTS[:] = [root]
    SITES.clear()
    _purge(root)
    old_path, old_cwd, old_argv = list(sys.path), os.getcwd(), list(sys.argv)
    sys.path.insert(0, root.rstrip(os.sep))
    for extra in prog.get("path", []):
        sys.path.insert(0, extra)
    os.chdir(root)
    status, error, where, stack = "ok", "", None, []
    reshard = None
    start = time.time()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(prog.get("timeout", 30)))
    # real files (a test's capture of stdout redirects the file descriptor)
    out, err = open(os.devnull, "w"), open(os.devnull, "w")
    so, se = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if "module" in prog:
                sys.argv = [prog["module"], *prog.get("argv", [])]
                runpy.run_module(prog["module"], run_name="__main__", alter_sys=True)
            else:
                path = os.path.join(root, prog["file"])
                sys.argv = [path, *prog.get("argv", [])]
                runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            status, error = "error", f"SystemExit: {e.code}"
    except _Timeout:
        status, error = "timeout", "timeout"
    except BaseException as e:  # noqa: BLE001
        status, error = "error", _err(e)
        stack = _error_stack(e.__traceback__)
        where = stack[0] if stack else None
        if type(e).__name__ == "ReshardError":  # strict mode's (tests/oracle/strict_child.py)
            reshard = {"code": e.code, "at": [e.filename, e.lineno]}
    finally:
        signal.alarm(0)
        sys.stdout, sys.stderr = so, se
        out.close()
        err.close()
        sys.path[:], sys.argv[:] = old_path, old_argv
        os.chdir(old_cwd)
        try:
            jax.set_mesh(None)
        except Exception:
            pass
        _purge(root)
    res = {"id": prog["id"], "status": status, "error": error, "error_at": where, "error_stack": stack,
           "seconds": round(time.time() - start, 3), "sites": list(SITES)}
    if reshard is not None:
        res["reshard"] = reshard
    return res


def main(argv: list[str]) -> int:
    job = json.loads(open(argv[0]).read())
    install()
    with open(argv[1], "a") as fh:
        for prog in job["programs"]:
            plat = prog.get("platform", job.get("platform", "cpu"))
            fh.write(json.dumps({"id": prog["id"], "platform": plat, "started": True}) + "\n")
            fh.flush()
            install_platform(plat)
            try:
                res = run_program(prog)
            finally:
                uninstall_platform()
            res["platform"] = plat
            fh.write(json.dumps(res) + "\n")
            fh.flush()
    return 0


# ---------------------------------------------------------------- for other recorders

def wrap(name: str, orig, new) -> None:
    """Record ``orig``'s calls through ``new`` wherever a public JAX module holds it
    (tests/oracle/mc_child.py adds recorders this way); ``real(name)`` is the original."""
    _REAL[name] = orig
    _replace_everywhere(orig, new)


def real(name: str):
    return _REAL[name]


error_text = _err


if __name__ == "__main__":
    # one module, whatever its name: the recorders of tests/oracle/mc_child.py import it
    # as tests.oracle.child and must record into these sites
    sys.modules.setdefault("tests.oracle.child", sys.modules[__name__])
    sys.exit(main(sys.argv[1:]))
