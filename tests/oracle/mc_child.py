"""The oracle's recorder inside a real multi-controller JAX job (tests/oracle/mc.py).

Runs in the processes of tests/multicontroller/harness.py (N processes of CPU devices
joined by ``jax.distributed.initialize`` on loopback) as a snippet: ``run(job, out)``
runs one program through the recording child's ``run_program`` (tests/oracle/child.py),
with every recorder of the one-process oracle and these on top:

- fetches by method: ``x.tolist()``, ``x.item()``; ``multihost_utils.process_allgather``;
- ``jax.default_device(d)`` (its target is the device);
- meshes built by user code (``Mesh(...)`` directly, or through ``jax.make_mesh`` and
  ``mesh_utils``): the device ids in mesh order, whether the set is every device and
  whether the order is ``jax.devices()``'s, with the user stack.

Nothing is repaired here (``child.REPAIR``): a call JAX refuses raises as it does for
users, and the program stops there. Each site record is also streamed to
``<out>.p<process>.jsonl`` as it is made, so that a process that crashes (a reordered
``in_shardings`` is SIGSEGV under multi-controller JAX) keeps its sites.

Afterwards each placement gets this process's view (``procs``: the processes owning its
devices; ``owned``: all, some or none of them are this process's) and each site
``foreign``: a fetch of devices this process does not own, or a put, computation or
default-device scope placed on such devices. Device ids are then rewritten as positions
in ``jax.devices()`` (``real_devices`` keeps the ids): with N processes of 8/N devices,
position ``i`` belongs to process ``i // (8 // N)``, which is how tests/oracle/compare.py
counts processes, so its comparison reads these runs unchanged.
"""

from __future__ import annotations

import faulthandler
import json
import sys

import jax
import jax.numpy as jnp
from jax._src import mesh as _mesh_lib
from jax.experimental import multihost_utils

from . import child
from .mc import annotate

_BUILDERS = ("make_mesh", "create_device_mesh", "create_hybrid_device_mesh")
_STREAM: list = [None]
_INSTALLED = [False]


class _Streamed(list):
    """A list of records (the child's sites, or the meshes), written out line by line as
    well, each line ``{tag: record}``."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag

    def append(self, rec: dict) -> None:  # type: ignore[override]
        super().append(rec)
        if _STREAM[0] is not None:
            _STREAM[0].write(json.dumps({self.tag: rec}, default=str) + "\n")
            _STREAM[0].flush()


def _fetch_method(name: str):
    orig = getattr(type(jnp.zeros(1)), name)

    def wrapper(self, *args, **kw):
        f = child.user_frame()
        if f is None:
            return orig(self, *args, **kw)
        rec = child.record(f, name, [{"src": child.placement(self), "dst": {"k": "host"}}])
        try:
            return orig(self, *args, **kw)
        except Exception as e:
            rec["error"] = child.error_text(e)
            raise
    wrapper.__name__ = name
    return wrapper


def _allgather(x, *args, **kw):
    f = child.user_frame()
    real = child.real("process_allgather")
    if f is None:
        return real(x, *args, **kw)
    leaves = [a for a in jax.tree.leaves(x) if isinstance(a, jax.Array)]
    pairs = [{"src": child.placement(a), "dst": {"k": "host"}} for a in leaves]
    rec = child.record(f, "process_allgather", pairs)
    try:
        return real(x, *args, **kw)
    except Exception as e:
        rec["error"] = child.error_text(e)
        raise


MESHES = _Streamed("mesh")


class _DefaultDevice:
    """``jax.default_device``: a config state that is called to open a scope."""

    def __init__(self, state) -> None:
        self._state = state

    def __call__(self, device):
        f = child.user_frame()
        if f is not None:
            pair = {"src": {"k": "scope"}, "dst": child.target_placement(device, None)}
            child.record(f, "default_device", [pair])
        return self._state(device)

    def __getattr__(self, name: str):
        return getattr(self._state, name)


def _mesh_new(orig):
    natural = [d.id for d in jax.devices()]

    def new(cls, devices, *args, **kw):
        m = orig(cls, devices, *args, **kw)
        f, hops = sys._getframe(1), 0
        while f is not None and f.f_code.co_name in _BUILDERS and hops < 2:
            f, hops = f.f_back, hops + 1
        stack = child.user_stack(f) if f is not None else []
        if stack and stack[0][0] == f.f_code.co_filename:
            ids = [d.id for d in m.devices.flat]
            MESHES.append({"ids": ids, "full": sorted(ids) == sorted(natural),
                           "natural": ids == [i for i in natural if i in set(ids)],
                           "local": all(d.process_index == jax.process_index() for d in m.devices.flat),
                           "stack": stack})
        return m
    return staticmethod(new)


def install_recorders() -> None:
    """The recorders above (fetch methods, ``process_allgather``, ``jax.default_device``);
    the one-process child installs them too."""
    array = type(jnp.zeros(1))
    for name in ("tolist", "item"):
        setattr(array, name, _fetch_method(name))
    child.wrap("process_allgather", multihost_utils.process_allgather, _allgather)
    child.wrap("default_device", jax.default_device, _DefaultDevice(jax.default_device))


def install() -> None:
    """Every recorder, once per process (the module stays imported between snippets)."""
    if _INSTALLED[0]:
        return
    _INSTALLED[0] = True
    child.install()
    child.REPAIR[0] = False
    child.SITES = _Streamed("site")
    _mesh_lib.Mesh.__new__ = _mesh_new(_mesh_lib.Mesh.__new__)


def _devices() -> dict:
    """{device id: [position in jax.devices(), owning process]}."""
    return {d.id: [i, d.process_index] for i, d in enumerate(jax.devices())}


def run(job: dict, out: str) -> None:
    """Run one program; write this process's record to ``<out>.p<process>.json``."""
    install()
    me = jax.process_index()
    # XLA crashes in its own threads: every thread's stack is dumped, the user frames
    # are in the main thread's
    faulthandler.enable(file=sys.stderr, all_threads=True)
    MESHES.clear()
    devices = _devices()
    with open(f"{out}.p{me}.jsonl", "w") as stream:
        stream.write(json.dumps({"devices": devices, "process": me}) + "\n")
        _STREAM[0] = stream
        try:
            res = child.run_program(job)
        finally:
            _STREAM[0] = None
    res.update(process=me, processes=jax.process_count(), meshes=list(MESHES))
    annotate(res, devices, me)
    with open(f"{out}.p{me}.json", "w") as fh:
        json.dump(res, fh, default=str)
