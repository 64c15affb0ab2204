"""The fix RSH201 and RSH202 share: build the target on the array's own mesh.

``jax.device_put(x, NamedSharding(other, P('x')))`` becomes
``jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))``, and a pytree moved to one
spec gets a target per leaf:
``jax.device_put(tree, jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, P('x')), tree))``.

It is offered only when its result is well-formed for what the analysis knows (SPEC.md:
"a fix is offered only when its result is a program that runs"):

- the array is written as the call writes it, and only when that is a name or an
  attribute chain (``x``, ``self.params``): cheap to evaluate twice, with no side effect;
- every leaf is an array on a mesh the analysis knows (a NumPy leaf has no ``.sharding``,
  a list has no ``.sharding`` at all), and every leaf goes to the same spec;
- every axis the spec names is an axis of the array's own mesh (else JAX raises
  "Resource axis ... not found in mesh");
- every dimension stays divisible (else JAX's ``IndivisibleError``): the axes the spec
  puts on a dimension are among those the array is split over there already, or their
  sizes multiply to the same on both meshes on every topology the model runs, so the
  fixed call divides the array as the original did;
- under a context mesh (``jax.set_mesh``), only a target that keeps the array's sharding:
  multi-controller JAX refuses any reshard on a mesh other than the context's
  (helpers/under_context.py);
- the names the text uses (``NamedSharding``, ``P``, ``jax``) are the module's, rebound in
  no function around the call; one the file lacks is imported by the fix
  (core/add_imports.py), unless the file uses the name for something else.
"""

from __future__ import annotations

import ast
import math
from typing import Iterator, Optional, Sequence, TypeGuard

from ...analysis import tree
from ...analysis.context import FileContext
from ...analysis.devices import Model
from ...analysis.events import Transfer
from ...analysis.partition import axis_names, spec_axes, spec_entries
from ...analysis.render import spec_label
from ...core import vocabulary as api
from ...core.diagnostic import Edit, Fix, Import
from ...analysis.values import ArrayVal, MeshVal, ShardingVal, Value
from .imports import can_import, import_note, spelled
from .under_context import ancestors, may_run_under_context

# One leaf of the moved value and its target.
Leaf = tuple[ArrayVal, Value]

# The lambda's parameter in the per-leaf form: the first the text does not use otherwise.
_LEAF_NAMES = ("a", "leaf", "arr", "a_")


def argument(ctx: FileContext, node: Optional[ast.AST]) -> Optional[str]:
    """The code of the moved array as the call writes it, when writing it again is cheap
    and has no side effect: a name or an attribute chain of this file."""
    if node is None or not ctx.module.holds(node):
        return None
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    return ctx.code(node, 10_000) if isinstance(root, ast.Name) else None


def spec_code(ctx: FileContext, target: Value) -> Optional[str]:
    """The PartitionSpec of a target as written in this file, if it can be written at any
    call site of the file (only names the module imports, and literals)."""
    if not isinstance(target, ShardingVal) or target.spec is None:
        return None
    node = target.spec.node
    if not ctx.module.holds(node):
        return None  # written in another module: its names are that module's
    imported = set(ctx.spellings.values())
    ok = True
    todo: list[ast.AST] = [node]
    while todo and ok:
        n = todo.pop()
        if isinstance(n, ast.Name):
            ok = n.id in imported
        elif isinstance(n, ast.Attribute):
            todo.append(n.value)  # P.UNCONSTRAINED: the attribute's name is not a name of the file
        else:
            # A keyword's or a lambda parameter's name counts as a name the spec reads:
            # a spec with keywords (P('x', unreduced={'y'})) is not written into a fix.
            name = n.arg if isinstance(n, (ast.keyword, ast.arg)) else None
            if name is not None:
                ok = name in imported
            todo.extend(ast.iter_child_nodes(n))
    return ctx.code(node, 10_000) if ok else None


def spec_text(ctx: FileContext, target: Value) -> Optional[tuple[str, tuple[Import, ...]]]:
    """The target's PartitionSpec as this file can write it, with the import it needs.

    The spec's own code where the file can write it (``spec_code``); else, for a spec of
    literal axes (``P('x', None)``, built in another module of the project or with names
    this file lacks), the same call spelled with this file's name for PartitionSpec, or
    with ``P`` and the import ``from jax.sharding import PartitionSpec as P``.
    """
    code = spec_code(ctx, target)
    if code is not None:
        return code, ()
    if not isinstance(target, ShardingVal) or target.spec is None:
        return None
    node = target.spec.node
    if not _literal_spec(node):
        return None
    args = ", ".join(ast.unparse(a) for a in node.args)
    name = spelled(ctx, api.PARTITION_SPEC) or ctx.spell(api.PARTITION_SPEC_SHORT)
    if name is not None:
        return f"{name}({args})", ()
    imports = (Import(api.SHARDING_MODULE, api.PARTITION_SPEC_WORD, api.PARTITION_SPEC_ALIAS),)
    return (f"{api.PARTITION_SPEC_ALIAS}({args})", imports) if can_import(ctx, imports) else None


def spec_hint(ctx: FileContext, target: Value) -> Optional[str]:
    """The target's PartitionSpec as a message writes it (``P('x', None)``): a spec of
    literal axes wherever it was built, another where the file can write it at the call
    (``spec_code``)."""
    if not isinstance(target, ShardingVal) or target.spec is None:
        return None
    literal = _literal_spec(target.spec.node)
    return spec_label(target.spec) if literal or spec_code(ctx, target) is not None else None


def _literal_spec(node: ast.AST) -> TypeGuard[ast.Call]:
    """``P('x', None, ('a', 'b'))``: a call of literal axes only, no keywords."""
    return isinstance(node, ast.Call) and not node.keywords and all(_axis_literal(a) for a in node.args)


def _axis_literal(node: ast.AST) -> bool:
    """An axis of a spec as a literal: 'x', None, ('x', 'y')."""
    if isinstance(node, ast.Constant):
        return node.value is None or type(node.value) is str
    if isinstance(node, ast.Tuple):
        return all(isinstance(e, ast.Constant) and type(e.value) is str for e in node.elts)
    return False


def fits_own_mesh(array: ArrayVal, target: Value) -> bool:
    """Every axis the target's PartitionSpec names is an axis of the array's own mesh.

    Both are read from literals (``analysis.partition``): the mesh's axis names as its
    ``Mesh(devs, names)`` or ``jax.make_mesh(shape, names)`` call writes them, the spec's
    axes as its ``P(...)`` call does. Anything unknown is not known to fit.
    """
    src = array.mesh
    if not isinstance(target, ShardingVal) or target.spec is None or src is None:
        return False
    used = spec_axes(target.spec)
    if used is None:
        return False
    if not used:
        return True  # P(): replicated, on any mesh
    names = axis_names(src)
    return names is not None and used <= set(names)


def _axis_sizes(ctx: FileContext, mesh: MeshVal, model: Model) -> Optional[dict[str, int]]:
    names = axis_names(mesh)
    arr = ctx.devices.run(mesh.devices.fn, model)
    if names is None or arr is None or arr.ndim != len(names):
        return None
    return dict(zip(names, arr.shape))


def _product(sizes: dict[str, int], axes: Sequence[str]) -> Optional[int]:
    if any(a not in sizes for a in axes):
        return None
    return math.prod(sizes[a] for a in axes)


def stays_divisible(ctx: FileContext, array: ArrayVal, target: Value) -> bool:
    """Each dimension the target's spec splits is split as finely on the array's own mesh
    as the array is already split there, or as finely as the target's mesh would split it.

    JAX needs every split dimension divisible by the product of its axes' sizes
    (``IndivisibleError``). The array is already placed on its own mesh with its own spec,
    so a dimension split over axes it is already split over (or over axes whose sizes
    divide theirs) divides; one split as finely as on the target divides exactly when the
    original call did. The sizes are the mesh shapes on every topology the model runs
    both meshes on; none: unknown, not known to divide.
    """
    src = array.mesh
    if not isinstance(target, ShardingVal) or target.spec is None or src is None:
        return False
    wanted = spec_entries(target.spec)
    if wanted is None:
        return False
    held = None if array.derived or array.sharding.spec is None else spec_entries(array.sharding.spec)
    todo: list[tuple[tuple[str, ...], Optional[tuple[str, ...]]]] = []
    for i, axes in enumerate(wanted):
        have = None if held is None else (held[i] if i < len(held) else ())
        if not axes or (have is not None and set(axes) <= set(have)):
            continue
        todo.append((axes, have))
    if not todo:
        return True
    dst = target.mesh
    seen = False
    for model in ctx.devices.models(src.devices.sizes + (dst.devices.sizes if dst else ())):
        own = _axis_sizes(ctx, src, model)
        theirs = _axis_sizes(ctx, dst, model) if dst is not None else None
        if own is None or (dst is not None and ctx.devices.run(dst.devices.fn, model) is None):
            continue  # a topology the program cannot run on
        for axes, have in todo:
            n = _product(own, axes)
            if n is None:
                return False
            same = theirs is not None and _product(theirs, axes) == n
            have_n = None if have is None else _product(own, have)
            split = have_n is not None and have_n % n == 0
            if not (same or split):
                return False
        seen = True
    return seen


def leaves_fit(ctx: FileContext, leaves: Sequence[Leaf]) -> bool:
    return all(fits_own_mesh(a, t) and stays_divisible(ctx, a, t) for a, t in leaves)


def keeps_sharding(array: ArrayVal, target: Value) -> bool:
    """The target's spec is the array's own (read from literals): on the array's own mesh
    the put moves nothing, so no context mesh can refuse it."""
    if array.derived or array.sharding.spec is None or not isinstance(target, ShardingVal) \
            or target.spec is None:
        return False
    have, want = spec_entries(array.sharding.spec), spec_entries(target.spec)
    return have is not None and want is not None and _trimmed(have) == _trimmed(want)


def _trimmed(entries: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """``P('x', None)`` is ``P('x')``: trailing unsplit dimensions dropped."""
    out = list(entries)
    while out and not out[-1]:
        out.pop()
    return tuple(out)


def _context_allows(ctx: FileContext, event: Transfer, leaves: Sequence[Leaf]) -> bool:
    """Under a context mesh (``jax.set_mesh``), multi-controller JAX refuses a reshard on any
    other mesh (helpers/under_context.py): there, only a put that keeps the sharding."""
    under = any(isinstance(t, ShardingVal) and t.from_context for _, t in leaves) \
        or may_run_under_context(ctx, event.node)
    if not under:
        return True
    target = event.target_node
    return target is not None and _sharding_node(target) is target \
        and all(keeps_sharding(a, t) for a, t in leaves)


# -- names at the call --------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp, ast.ClassDef)


def _bound_in(scope: ast.AST) -> Iterator[str]:
    """Names a function, lambda, comprehension or class body binds (those of the scopes
    inside it too: a superset, which only withholds a fix)."""
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            yield n.id
        elif isinstance(n, ast.arg):
            yield n.arg
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not scope:
            yield n.name
        elif isinstance(n, ast.alias):
            yield n.asname or n.name.split(".")[0]
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            yield from n.names


def module_names_reach(ctx: FileContext, node: ast.AST, names: set[str]) -> bool:
    """None of ``names`` is bound in a scope around ``node``: there they are the module's."""
    return not any(isinstance(a, _SCOPES) and not names.isdisjoint(_bound_in(a))
                   for a in ancestors(ctx, node))


def _roots(code: str) -> set[str]:
    """The free names of an expression's code."""
    try:
        expr = ast.parse(code, mode="eval")
    except SyntaxError:
        return {"<unparsable>"}
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


# -- the fix ----------------------------------------------------------------------------------

def _sharding_node(node: ast.AST) -> ast.AST:
    """The sharding inside ``s.with_memory_kind(...)`` (the memory kind stays as written)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "with_memory_kind":
        node = node.func.value
    return node


def _named_sharding(ctx: FileContext, imports: list[Import]) -> str:
    name = spelled(ctx, api.NAMED_SHARDING) or ctx.spell(api.NAMED_SHARDING_SHORT)
    if name is None:  # the fix adds `from jax.sharding import NamedSharding`
        imports.append(Import(api.SHARDING_MODULE, api.NAMED_SHARDING_WORD))
        name = api.NAMED_SHARDING_WORD
    return name


def _tree_map(ctx: FileContext, imports: list[Import]) -> str:
    name = spelled(ctx, api.TREE_MAP)
    if name is None:  # the fix adds `import jax`
        imports.append(Import(api.JAX))
        name = api.TREE_MAP
    return name


def own_mesh_fix(ctx: FileContext, event: Transfer, leaves: Optional[Sequence[Leaf]], per_leaf: bool) -> Optional[Fix]:
    """``device_put(x, s)`` -> ``device_put(x, NamedSharding(x.sharding.mesh, spec))``; for a
    pytree (``per_leaf``), a target per leaf on its own mesh. None when the result would not
    be well-formed (the module's docstring)."""
    if not leaves or event.target_node is None or event.through is not None:
        return None
    x = argument(ctx, event.value_node)
    target = event.target_node
    if x is None or not ctx.module.holds(target) or not leaves_fit(ctx, leaves) \
            or not _context_allows(ctx, event, leaves):
        return None
    if per_leaf and _sharding_node(target) is not target:
        return None  # a memory kind would have to go inside the lambda: not attempted
    if event.repeated and not all(_written_in(t, target) for _, t in leaves):
        # Run again with other values (a loop's element, a tree.map leaf), the target may
        # hold another spec: only one written in the target's own code is the same on
        # every run.
        return None
    written = [spec_text(ctx, t) for _, t in leaves]
    first = written[0]
    if first is None or any(w != first for w in written):
        return None  # a spec the file cannot write, or leaves bound to different specs
    spec, spec_imports = first
    imports: list[Import] = list(spec_imports)
    if not per_leaf:
        target = _sharding_node(target)
        mesh_arg = _written_mesh_arg(leaves[0][1], target)
        if mesh_arg is not None and _keeps_more(ctx, target):
            # NamedSharding(...) written here over several lines or with more arguments
            # (memory_kind=): only its mesh argument is replaced, so the rest and the
            # comments between them stay.
            text = f"{x}.sharding.mesh"
            line, col, end_line, end_col = ctx.span(mesh_arg)
            return Fix(title=f"Build the target on the array's own mesh: {text} as its mesh",
                       edits=(Edit(line, col, end_line, end_col, text),), safe=False)
    ns = _named_sharding(ctx, imports)
    used = _roots(ns) | _roots(spec)
    if per_leaf:
        tree_map = _tree_map(ctx, imports)
        leaf = next((n for n in _LEAF_NAMES if n not in used), None)
        if leaf is None:
            return None
        used |= _roots(tree_map)
        text = f"{tree_map}(lambda {leaf}: {ns}({leaf}.sharding.mesh, {spec}), {x})"
        title = f"Build each leaf's target on its own mesh: {text}"
    else:
        text = f"{ns}({x}.sharding.mesh, {spec})"
        title = f"Build the target on the array's own mesh: {text}"
    if not can_import(ctx, imports) or not module_names_reach(ctx, event.node, used):
        return None
    line, col, end_line, end_col = ctx.span(target)
    return Fix(title=f"{title}{import_note(imports)}",
               edits=(Edit(line, col, end_line, end_col, text),), safe=False, imports=tuple(imports))


def _written_in(target: Value, node: ast.AST) -> bool:
    """The target's PartitionSpec is written inside ``node`` (the call's target)."""
    if not isinstance(target, ShardingVal) or target.spec is None:
        return False
    spec = target.spec.node
    return any(n is spec for n in ast.walk(node))


def _keeps_more(ctx: FileContext, call: ast.AST) -> bool:
    """A NamedSharding call written over several lines, or with more than mesh and spec."""
    line, _, end_line, _ = ctx.span(call)
    return end_line != line or (isinstance(call, ast.Call) and len(tree.call_args(call)) > 2)


def _written_mesh_arg(target: Value, node: ast.AST) -> Optional[ast.expr]:
    """The mesh argument of ``node`` when ``node`` is the NamedSharding call that built
    ``target`` (first positional argument or ``mesh=``); None otherwise."""
    if not (isinstance(target, ShardingVal) and target.node is node and target.mesh is not None
            and not target.from_context and isinstance(node, ast.Call)):
        return None  # (a bare P(...) under a context mesh is no NamedSharding call)
    args = tree.call_args(node)
    if any(tree.arg_star(a) for a in args):
        return None
    if args and tree.arg_keyword(args[0]) is None:
        return tree.arg_value(args[0])
    for a in args:
        if tree.arg_keyword(a) == api.MESH_KEYWORD:
            return tree.arg_value(a)
    return None


# -- the message's hint -------------------------------------------------------------------------

# Expressions `.sharding` can follow as they are written.
_PRIMARY = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Dict, ast.Set,
            ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _parenthesised(code: str) -> bool:
    """``(x + 1)``, not ``(a) + (b)``: the code is one expression in its own parentheses."""
    if not (code.startswith("(") and code.endswith(")")):
        return False
    try:
        ast.parse(code[1:-1], mode="eval")
    except SyntaxError:
        return False
    return True


def hint(ctx: FileContext, event: Transfer, leaves: Optional[Sequence[Leaf]], per_leaf: bool) -> str:
    """What the message says to write: the fix's form, with ``spec`` for a spec the fix
    could not write there (one the file cannot spell, that names an axis the array's mesh
    lacks, that may not divide it, or that differs between leaves), and ``<array>``
    (``<pytree>``) for an argument that is not short code at the call."""
    node = event.value_node
    x = None
    if node is not None and ctx.module.holds(node):
        code = ctx.code(node, 10_000)
        if not isinstance(node, _PRIMARY) and not _parenthesised(code):
            code = f"({code})"  # `(x + 1).sharding`, not `x + 1.sharding`
        x = code if len(code) <= 40 else None  # (a longer one would be cut: not code)
    if not leaves:  # a leaf that is not an array on a known mesh (NumPy data, unknown)
        return f"NamedSharding(leaf.sharding.mesh, spec) for each array leaf of {x or 'the pytree'}"
    specs = {spec_hint(ctx, t) for _, t in leaves}
    spec = specs.pop() if len(specs) == 1 else None
    if spec is None or not leaves_fit(ctx, leaves):
        spec = "spec"
    if per_leaf:
        return f"jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, {spec}), {x or '<pytree>'})"
    return f"NamedSharding({x or '<array>'}.sharding.mesh, {spec})"
