"""jax's own test helpers (``from jax._src import test_util as jtu``): the meshes jax's
test suite builds with ``jtu.create_mesh`` and ``@jtu.with_explicit_mesh``, read as the
JAX calls they make (jax/_src/test_util.py 0.10.2), so that the analysis reaches the
transfers of JAX's own tests. tests/platforms/test_builder_orders.py runs the helpers on
mock devices against ``jax.make_mesh``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...core import vocabulary as api
from .registry import handles
from ..arguments import Call
from ..reasons import UNMODELLED_JAX
from ..scope import Scope
from ..values import UNKNOWN, ConstVal, MeshContextVal, MeshDecoratorVal, Value, unknown
from .meshes import axis_types, make_mesh_value
from ..shard_indices import names_of

if TYPE_CHECKING:
    from ..interpreter import Analyzer


def _iota_order(call: Call, index: int) -> bool:
    """``iota_order=True`` builds a Mesh on the devices sorted by id: not modelled."""
    value = call.arg(index, "iota_order")
    return call.given(index, "iota_order") and not (isinstance(value, ConstVal) and value.value is False)


@handles(api.TEST_UTIL_CREATE_MESH)
def _test_util_create_mesh(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """jax's test helper: ``jtu.create_mesh(shape, names)`` returns
    ``sharding_impls.make_mesh(shape, names, axis_types)``, which is ``jax.make_mesh``
    (jax/_src/test_util.py 0.10.2; it skips the test where fewer devices exist, as the
    models drop topologies the shape does not fit). ``iota_order=True`` builds a ``Mesh``
    on the devices sorted by id instead: not modelled."""
    if _iota_order(call, 2):
        return unknown(UNMODELLED_JAX, f"{api.TEST_UTIL_CREATE_MESH} with iota_order=")
    return make_mesh_value(an, call, node, call.arg(0, "mesh_shape"), UNKNOWN, False,
                           axes=names_of(call.arg(1, "axis_names")),
                           types=axis_types(an, call, 3, api.AXIS_TYPE_AUTO, scope))


@handles(api.TEST_UTIL_WITH_EXPLICIT_MESH)
def _test_util_with_explicit_mesh(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    """jax's test decorator: ``@jtu.with_explicit_mesh(sizes, names)`` runs the test under
    ``set_mesh(create_mesh(sizes, names, iota_order, axis_types=<Explicit>))`` and passes
    that mesh as ``mesh=`` (jax/_src/test_util.py 0.10.2). With ``iota_order=True``: not
    modelled."""
    if _iota_order(call, 3):
        return unknown(UNMODELLED_JAX, f"{api.TEST_UTIL_WITH_EXPLICIT_MESH} with iota_order=")
    # The test receives it as ``mesh``: messages call it so.
    mesh = make_mesh_value(an, call, node, call.arg(0, "sizes"), UNKNOWN, False, name="mesh",
                           axes=names_of(call.arg(1, "names")),
                           types=axis_types(an, call, 2, api.AXIS_TYPE_EXPLICIT, scope))
    return MeshDecoratorVal(MeshContextVal(mesh, node))
