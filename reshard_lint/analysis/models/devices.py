"""jax.devices(), jax.local_devices() and the device and process counts."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from ...core import vocabulary as api
from .registry import handles
from .. import devices as dv
from ..arguments import Call
from ..scope import Scope
from ..valueops import PerProcess
from ..values import ConstVal, DevVal, IntVal, UNKNOWN, Value, undecidable

if TYPE_CHECKING:
    from ..interpreter import Analyzer


def _platform(an: Analyzer, call: Call, index: int, kw: str) -> tuple[bool, Optional[str]]:
    """(known, platform): known is False when the backend is not a literal."""
    if not call.given(index, kw):
        return True, None
    v = call.arg(index, kw)
    if isinstance(v, ConstVal) and (v.value is None or isinstance(v.value, str)):
        return True, v.value
    return False, None


@handles(api.DEVICES)
def _devices(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    known, platform = _platform(an, call, 0, "backend")
    fn = (lambda m: dv.natural(m, platform)) if known else undecidable
    return DevVal(fn=fn, desc=an.ctx.code(node, 40), node=node,
                  platforms=frozenset({platform or "default"} if known else {"?"}))


@handles(api.LOCAL_DEVICES)
def _local_devices(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    known, platform = _platform(an, call, 1, "backend")
    if call.given(0, "process_index") or call.has_star:
        known = False
    fn = (lambda m: dv.local(m, platform)) if known else undecidable
    return DevVal(fn=fn, desc=an.ctx.code(node, 40), node=node,
                  platforms=frozenset({platform or "default"} if known else {"?"}))


@handles(api.DEVICE_COUNT)
def _device_count(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    if call.positional or call.keywords:
        return UNKNOWN
    return IntVal(lambda m: m.n)


@handles(api.LOCAL_DEVICE_COUNT)
def _local_device_count(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    if call.positional or call.keywords:
        return UNKNOWN
    return IntVal(lambda m: m.per_process)


@handles(api.PROCESS_COUNT)
def _process_count(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    return IntVal(lambda m: m.processes)


@handles(api.PROCESS_INDEX)
def _process_index(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = IntVal(lambda m: m.proc)
    v.literal = None
    return PerProcess(v.fn)
