"""Call sites in the project's other modules, for a function its own module never calls.

``make_mesh(shape=(2, 4), devices=None)`` defined in ``servekit/mesh.py`` and called only
from ``serve.py``, ``DecodeEngine.__init__(self, mesh, layout_seed=0)`` constructed only in
another module: the module's own analysis saw no call, so every parameter was "a parameter
no call site feeds". The project layer finds every call the other modules make
(project/callers.py); each becomes a call site whose arguments are what the call spells
as literals (numbers, strings, ``None``, tuples and lists of them) or the defaults of the
parameters it leaves out, and an unknown of its own for anything else (a value the other
module computes). The function's run then takes what every call site agrees on, as for
calls in its own module (callsites.py): a seed every caller leaves at its default is that
default, a mesh each caller builds in its own ``main()`` stays unknown.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Optional

from ..core import vocabulary as api
from .arguments import Call
from .callsites import FOREIGN_VALUE
from .events import Event, MeshBuilt, ShardingBuilt, Transfer
from .valueops import constant
from .values import DevVal, FuncVal, IntVal, SeqVal, Value, is_unknown, unknown

if TYPE_CHECKING:
    from .context import FileContext


# (the call in the other module, the values of its arguments at each evaluation there)
ForeignCall = tuple[ast.Call, list[Call]]


def named_elsewhere(ctx: FileContext, func: FuncVal) -> bool:
    """Does another file of the project spell the name of ``func`` (a method's, or a
    function's)? Then "no call site feeds" its parameters would say more than is known:
    the calls there are not followed (callsites.CALLED_ELSEWHERE)."""
    view = ctx.project
    fn = func.node
    if view is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name not in _building(ctx):
        return False
    project = view.project
    project.words(check=False)
    own = os.path.realpath(ctx.path)
    return any(os.path.realpath(f) != own for f in project.files_naming(fn.name, view.deps))


def foreign_calls(ctx: FileContext, func: FuncVal) -> Optional[list[ForeignCall]]:
    """The other modules' calls of ``func`` (a top-level function, or a top-level class's
    ``__init__``: its constructions), or None when there are none or not all are seen."""
    view = ctx.project
    fn = func.node
    if view is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    top = ctx.module.tree.body
    owner = func.owner
    if func.home is not None:
        return None
    if owner is not None:
        if fn.name != "__init__" or owner.home is not None or not any(s is owner.node for s in top):
            return None
        name = owner.node.name
    elif any(s is fn for s in top):
        name = fn.name
    else:
        return None
    # Only a body that builds or moves something, or calls a function of the module that
    # does, is worth the other modules' calls (the search reads the project's files).
    if fn.name not in _building(ctx):
        return None
    found = view.calls_of(ctx.path, name)
    if not found:
        return None
    out: list[ForeignCall] = []
    asked: dict[str, frozenset[tuple[int, int]]] = {}
    for path, call in found:
        spelled = Call(call, [(k, _literal(v, f"{name}() at {view.project.display(path)}:{call.lineno}"), a)
                              for k, v, a in _arguments(call)])
        if any(is_unknown(v) for v in _values(spelled)):
            asked[path] = asked.get(path, frozenset()) | {(call.lineno, call.col_offset)}
        out.append((call, [spelled]))
    for path, keys in asked.items():
        # Values the calling module computes (a mesh its main() builds): that module's
        # own analysis evaluates the call, and each evaluation is a context of this one.
        recorded = view.arguments_at(path, keys)
        if recorded is None:
            continue
        for i, (call, _) in enumerate(out):
            evaluated = recorded.get((call.lineno, call.col_offset))
            if evaluated and found[i][0] == path:
                out[i] = (call, list(evaluated))
    return out


def _building(ctx: FileContext) -> frozenset[str]:
    """The module's top-level functions (and methods, by name) whose bodies build or move
    something (``BUILD_WORDS``), or call such a top-level function of the module, through
    at most three calls (``batches(mesh)`` yielding ``to_global(x, mesh)``, whose body
    makes a global array). Once per file."""
    if ctx.building is not None:
        return ctx.building
    bodies: dict[str, str] = {}
    top: set[str] = set()
    for stmt in ctx.module.tree.body:
        defs = [stmt] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else \
            [s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))] \
            if isinstance(stmt, ast.ClassDef) else []
        for d in defs:
            text = "".join(ctx.module.lines[d.lineno - 1:d.end_lineno])
            bodies[d.name] = bodies.get(d.name, "") + text
            if d is stmt:
                top.add(d.name)
    found = {name for name, text in bodies.items() if any(w in text for w in api.BUILD_WORDS)}
    for _ in range(3):
        calls = tuple(f"{name}(" for name in sorted(found & top))
        more = {name for name, text in bodies.items() if name not in found and any(c in text for c in calls)}
        if not more:
            break
        found |= more
    ctx.building = frozenset(found)
    return ctx.building


def _values(call: Call) -> list[Value]:
    return [v for v, _ in call.positional] + [v for v, _ in call.keywords.values()]


def _arguments(call: ast.Call) -> list[tuple[Optional[str], ast.expr, ast.expr | ast.keyword]]:
    out: list[tuple[Optional[str], ast.expr, ast.expr | ast.keyword]] = [(None, a, a) for a in call.args]
    out += [(k.arg, k.value, k) for k in call.keywords]
    return out


def _literal(node: ast.expr, where: str) -> Value:
    """What a literal argument of another module's call is; an unknown of its own else."""
    if isinstance(node, ast.Constant):
        return constant(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        n = -node.operand.value
        return IntVal(lambda _m: n, literal=n)
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        items = tuple(_literal(e, where) for e in node.elts)
        if not any(is_unknown(i) for i in items):
            return SeqVal(items, "tuple" if isinstance(node, ast.Tuple) else "list")
    return unknown(FOREIGN_VALUE, where)


def elsewhere(ctx: FileContext, event: Event) -> bool:
    """In a run fed by other modules' calls (callsites.fed): is ``event`` theirs to report?
    A transfer (each call's relay reports it, named by the call; marked ``fed``, coverage
    still counts it here: engine.py), or a construction whose wrong part a caller wrote
    (handed_in, there)."""
    if isinstance(event, Transfer):
        event.fed = True
        return False
    if isinstance(event, MeshBuilt):
        steps = event.mesh.devices.steps
        return bool(steps) and all(ctx.module.owner(outer) is not ctx.module for outer, _ in steps)
    if isinstance(event, ShardingBuilt) and isinstance(event.first, DevVal) and event.first.node is not None:
        return ctx.module.owner(event.first.node) is not ctx.module
    return False


def handed_in(ctx: FileContext, event: MeshBuilt | ShardingBuilt, args: tuple[Value, ...]) -> bool:
    """Does the call being relayed (its parameters bound to ``args``) hand the construction
    what is wrong with it? A mesh's reordering written in this file (the list passed in,
    reordered here), or a sharding's non-mesh first argument passed by the call or taken
    from the default of a parameter it left out."""
    if isinstance(event, MeshBuilt):
        steps = event.mesh.devices.steps
        return bool(steps) and all(ctx.module.owner(outer) is ctx.module for outer, _ in steps)
    return isinstance(event.first, DevVal) and any(v is event.first for v in args)
