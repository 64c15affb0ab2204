"""Bringing an array's value to the host: jax.device_get, np.asarray / np.array, .tolist().

In multi-controller JAX a process can only read the shards it holds: fetching an array
split across processes raises "Fetching value for jax.Array that spans non-addressable
(non process local) devices is not possible" (RUNTIME-FACTS.md, "Process-local data and
other processes' devices"). ``float(x)``, ``int(x)`` and ``x.item()`` need a
one-element array, which no mesh axis splits: no rule reads them, and they are sites for
``reshard-lint coverage`` only (``FetchSite``), as is every fetch of an array whose
placement the analysis does not know, and whatever ``jax.device_get`` is given.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from ...core import vocabulary as api
from .registry import handles
from ..arguments import Call
from ..events import Fetch, FetchSite, Gather, Site
from ..reasons import NOT_JUDGED
from ..scope import Scope
from ..valueops import leaves
from ..values import ArrayVal, ConstVal, HostVal, Text, Value, text_of, unknown
from .host import is_host
from .commitments import single_device

if TYPE_CHECKING:
    from ..interpreter import Analyzer

METHODS = api.FETCH_METHODS  # the gate lets a file through for them (ONE_MESH_USES)
# np.asarray, np.array and np.copy share one canonical name (qualnames.py).
FUNCTIONS = frozenset({api.NP_ARRAY})
SCALAR_METHODS = api.SCALAR_FETCH_METHODS
SCALAR_FUNCTIONS = api.SCALAR_READS


def fetch(an: "Analyzer", value: Value, node: ast.Call, value_node: Optional[ast.AST],
          func: Text, *, every: bool = False, scalar: bool = False) -> Value:
    """A Fetch event for each array of ``value`` with a known mesh or device (the rules
    judge those), a FetchSite for each other array (and each such array of a ``scalar``
    read), for coverage; with ``every`` (``jax.device_get``, which is given arrays) also a
    FetchSite for each leaf that is no array and no host data, or for the whole value
    when it is host data. The result is host data."""
    seen = False
    for leaf in leaves(value):
        at = value_node if leaf is value else None
        if isinstance(leaf, ArrayVal) and (leaf.mesh is not None or single_device(leaf) is not None) \
                and not scalar:
            an.emit(Fetch(node=node, ctx=an.ctx, value=leaf, value_node=at, func=text_of(func)))
        elif an.ctx.coverage_sites is None:
            continue
        elif isinstance(leaf, ArrayVal) or every and not is_host(leaf):
            an.emit(FetchSite(node=node, ctx=an.ctx, value=leaf, value_node=at, func=text_of(func)))
        else:
            continue
        seen = True
    if every and not seen and an.ctx.coverage_sites is not None:
        an.emit(FetchSite(node=node, ctx=an.ctx, value=value, value_node=value_node, func=text_of(func)))
    return HostVal(an.ctx.lazy_code(node, 40), node)


@handles(api.DEVICE_GET)
def _device_get(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    return fetch(an, call.arg(0, "x"), node, call.arg_node(0, "x"), an.ctx.lazy_code(node.func, 30), every=True)


@handles(api.PROCESS_ALLGATHER)
def _allgather(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    """``process_allgather(x, tiled=False)``: a Gather event for each array of ``x`` with a
    known mesh (from JAX 0.8 a global array raises there unless ``tiled=True``:
    jax/experimental/multihost_utils.py ``_handle_array_process_allgather``); the result
    is host data, as for the other collectives below."""
    tiled: Optional[bool] = False  # process_allgather(in_tree, tiled=False)
    if call.has_star:
        tiled = None
    elif call.given(1, api.TILED_KEYWORD):
        v = call.arg(1, api.TILED_KEYWORD)
        tiled = v.value if isinstance(v, ConstVal) and type(v.value) is bool else None
    value, value_node = call.arg(0, "in_tree"), call.arg_node(0, "in_tree")
    for leaf in leaves(value):
        if isinstance(leaf, ArrayVal) and leaf.mesh is not None:
            an.emit(Gather(node=node, ctx=an.ctx, value=leaf,
                           value_node=value_node if leaf is value else None, tiled=tiled,
                           func=an.ctx.lazy_code(node.func, 50)))
    return _gathered(an, call, node, scope)


@handles(api.BROADCAST_ONE_TO_ALL)
def _gathered(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    """Collectives that hand every process the whole value as NumPy arrays ("Returns:
    Pytrees of numpy arrays", jax/experimental/multihost_utils.py 0.10.2; process 0's
    data for broadcast_one_to_all): host data, whatever they were given, and no fetch of
    another process's shards. A site for coverage, which no rule judges: host data
    gathered is harmless; an array is not judged (``tiled``, and which processes hold
    it, decide whether JAX gathers it)."""
    if an.ctx.coverage_sites is None:
        return HostVal(an.ctx.lazy_code(node, 40), node)
    x = call.arg(0, "in_tree")
    an.emit(Site(node=node, ctx=an.ctx, kind="allgather", value=x,
                 target=unknown(NOT_JUDGED, an.ctx.code(node.func, 50)), value_node=call.arg_node(0, "in_tree"),
                 target_node=None, func=an.ctx.lazy_code(node.func, 50)))
    return HostVal(an.ctx.lazy_code(node, 40), node)
