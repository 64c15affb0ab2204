"""Device ids: ``d.id``, lists of them, the N of ``"tpu:N"``; and ids used as positions.

An id is a position in ``jax.devices()`` on one process only (RUNTIME-FACTS.md: two
processes of four CPU devices have ids 0-3 and 2048-2051; multi-host TPU ids follow the
chips' coordinates, docs/platforms.md). These values let RSH104 see
``jax.devices()[d.id]`` and ``[jax.devices()[i] for i in device_ids]``.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Optional

from .. import tree
from ..events import IdAsIndex
from ..values import ConstVal, DeviceIdVal, DevVal, SeqVal, Value, undecidable

if TYPE_CHECKING:
    from ..interpreter import Analyzer

_DEVICE_NAME = re.compile(r"^(tpu|gpu|cpu|cuda|rocm):(\d+)$", re.IGNORECASE)


def attribute_id(base: Value, attr: str, node: ast.Attribute, an: "Analyzer") -> Optional[Value]:
    """``d.id`` of a single device (a loop variable over devices included)."""
    if attr == "id" and isinstance(base, DevVal) and base.single:
        return DeviceIdVal(node, an.ctx.code(node, 40))
    return None


def ids_of_devices(node: ast.ListComp | ast.GeneratorExp | ast.SetComp, it: Value,
                   an: "Analyzer") -> Optional[Value]:
    """``[d.id for d in devs]``: the ids of a device list, in its order."""
    comp = node.generators[0]
    elt = getattr(node, "elt", None)
    if isinstance(it, DevVal) and not it.single and len(node.generators) == 1 and not comp.ifs \
            and isinstance(comp.target, ast.Name) and isinstance(elt, ast.Attribute) \
            and elt.attr == "id" and isinstance(elt.value, ast.Name) \
            and elt.value.id == comp.target.id:
        return DeviceIdVal(node, an.ctx.code(node, 40), many=True)
    return None


def element(it: Value) -> Optional[Value]:
    """What iterating a list of ids gives."""
    return it.one() if isinstance(it, DeviceIdVal) and it.many else None


def split_name(recv: Value, sep: Value, node: ast.Call, an: "Analyzer") -> Optional[Value]:
    """``"tpu:2".split(":")``: the platform, and the 2 as a device id (once int() reads it)."""
    if isinstance(recv, ConstVal) and isinstance(recv.value, str) and isinstance(sep, ConstVal) \
            and sep.value == ":":
        m = _DEVICE_NAME.match(recv.value)
        if m:
            digits = DeviceIdVal(node, f"the id in {recv.value!r}", text=True)
            return SeqVal((ConstVal(m.group(1)), digits), kind="list")
    return None


def int_of(v: Value) -> Optional[Value]:
    return v.one() if isinstance(v, DeviceIdVal) and v.text else None


def index_by_id(base: DevVal, part: object, node: ast.Subscript, an: "Analyzer") -> Optional[Value]:
    """``devs[i]`` with ``i`` a device id: an event for RSH104, and an unknown device."""
    if not (isinstance(part, DeviceIdVal) and not part.many and not part.text):
        return None
    if base.fresh and base.from_mesh is None and not base.single:
        index = tree.subscript_items(node)[0]
        assert not isinstance(index, ast.Slice)
        an.emit(IdAsIndex(node=node, ctx=an.ctx, devices=base, index=part, base_node=node.value,
                          index_node=index.value if isinstance(index, ast.Starred) else index))
    return DevVal(fn=undecidable, desc=an.ctx.code(node, 40), node=node, single=True,
                  fresh=base.fresh, from_mesh=base.from_mesh)
