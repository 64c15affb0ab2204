"""The context mesh as a side: what meets ``jax.set_mesh(m)`` from another device.

Under ``jax.set_mesh(m)`` (as a context manager or a global setter) every JAX computation
checks its committed arguments, and a jit's explicit output shardings, against ``m``
(RUNTIME-FACTS.md, "The context mesh", jax 0.10.2): an array committed to one device
(``device_put(x, d)``, a shard's ``.data``, ``x.addressable_data(i)``) sliced, added to or
passed to ``jnp``/``lax``/a jitted function there, and a ``jit(out_shardings=<another mesh>)``
called there, raise "Received incompatible devices for jitted computation", on one host
too. Uncommitted arrays and host data do not, and neither does the legacy ``with mesh:``.

Arrays on another *mesh* are claimed only when both meshes are ``Mesh(devices, names)``
with the default (auto) axis types: under a mesh with other axis types (``jax.make_mesh``
makes explicit axes in jax 0.10.2, auto ones before) JAX raises a different error first
("context mesh ... should match the aval mesh"), so the message would not be what a user
sees.

The interpreter calls ``operands`` and ``jit_call`` where computations happen; they emit
``ContextOp`` events (RSH203 reads them) and say whether they did, so the caller can
make the failed computation's result unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional

from ..core import vocabulary as api
from .events import ContextOp
from .models.commitments import single_device
from .tree import arg_keyword, arg_star, arg_value, call_args
from .valueops import leaves
from .values import ArrayVal, JitVal, MeshContextVal, MeshVal, ShardingVal, Value

if TYPE_CHECKING:
    from .arguments import Call
    from .context import FileContext
    from .interpreter import Analyzer

# jax.numpy functions that compute nothing on their argument's devices (they read its
# shape or dtype, or return it as it is: jnp.array and jnp.asarray, the gate's JNP_MAKERS).
_NO_COMPUTATION = frozenset({
    "shape", "ndim", "size", "result_type", "dtype", "iscomplexobj", "isrealobj", "issubdtype",
    "isscalar", "from_dlpack", "dtypes",
}) | api.JNP_MAKERS
# jax.lax functions with events of their own (transfers.py).
_LAX_OWN = frozenset({api.WITH_SHARDING_CONSTRAINT})
# jax.Array methods that compute (observed: astype, sum; the rest take the same path).
ARRAY_METHODS = frozenset({
    "astype", "sum", "mean", "max", "min", "prod", "std", "var", "all", "any", "argmax", "argmin",
    "cumsum", "reshape", "ravel", "flatten", "transpose", "squeeze", "clip", "round", "dot",
})
ARITHMETIC_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def in_force(an: "Analyzer") -> Optional[MeshContextVal]:
    """The ``jax.set_mesh(m)`` in force here, when its mesh is known."""
    site = an.context_site
    if isinstance(site, MeshContextVal) and site.node is not None and site.mesh is an.context_mesh:
        return site
    return None


def spans_several(ctx: "FileContext", mesh: MeshVal) -> bool:
    """True when the mesh holds at least two devices on every topology that builds it."""
    counts = ctx.devices.observe(mesh.devices.fn, mesh.devices.sizes, lambda a: len(a.flat))
    return bool(counts) and min(counts) >= 2


def operands(an: "Analyzer", node: ast.AST, values: Iterable[tuple[Value, Optional[ast.AST]]],
             limit: int = 40) -> bool:
    """A computation on ``values`` under the context mesh: ContextOp for a committed one,
    described by the first ``limit`` characters of ``node`` (generated only then: every
    comparison and arithmetic operation of a file comes here)."""
    site = in_force(an)
    if site is None:
        return False
    for v, vnode in values:
        for leaf in leaves(v):
            if single_device(leaf) is not None and spans_several(an.ctx, site.mesh) or \
                    isinstance(leaf, ArrayVal) and leaf.mesh is not None and _auto(leaf.mesh) \
                    and _auto(site.mesh) and an.ctx.differs(leaf.mesh, site.mesh):
                an.emit(ContextOp(node=node, ctx=an.ctx, context=site, array=leaf, target=None,
                                  value_node=vnode if leaf is v else None,
                                  what=an.ctx.code(node, limit)))
                return True
    return False


def _auto(mesh: MeshVal) -> bool:
    """``Mesh(devices, names)`` with the default axis types (auto in every JAX version)."""
    node = mesh.node
    if not (mesh.ctor == api.MESH_WORD and type(node) is ast.Call):
        return False
    args = call_args(node)
    return not any(arg_keyword(a) == "axis_types" or arg_star(a) for a in args) and len(args) <= 2


def qual_call(an: "Analyzer", name: str, call: Call, node: ast.Call) -> bool:
    """``jnp.*`` and ``jax.lax.*`` calls: computations on their array arguments."""
    if in_force(an) is None:
        return False
    if name.startswith(api.JNP_KEY_PREFIX):
        if name[4:] in _NO_COMPUTATION:
            return False
    elif not name.startswith(api.LAX_PREFIX) or name in _LAX_OWN:
        return False
    args = [(v, arg_value(a)) for v, a in call.positional]
    args += [(v, arg_value(a)) for v, a in call.keywords.values()]
    return operands(an, node, args, 50)


def jit_call(an: "Analyzer", jit: JitVal, call: Call, node: ast.Call) -> bool:
    """A jitted function called under the context mesh: its arguments and output shardings."""
    site = in_force(an)
    if site is None:
        return False
    args = [(v, arg_value(a)) for v, a in call.positional]
    if operands(an, node, args):
        return True
    for target in leaves(jit.out_shardings):
        # differs(): another set or order on every topology (a sub-mesh, a reversal: both observed).
        if isinstance(target, ShardingVal) and target.mesh is not None \
                and an.ctx.differs(target.mesh, site.mesh):
            an.emit(ContextOp(node=node, ctx=an.ctx, context=site, array=None, target=target,
                              value_node=None, what=an.ctx.code(node, 40)))
            return True
    return False
