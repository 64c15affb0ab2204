"""What the gate reads from Python's tree of a file, and its decision on those facts.

``gate_facts`` walks the tree once and records the shapes a finding needs (device lists,
meshes, transfers and where they are built); ``decide`` says whether they can add up to a
finding. gate.py applies them to a whole file; components.py to each part of a long file;
slicing.py shares the names of the calls they look for.
"""

from __future__ import annotations

import ast
from typing import Iterable

from ..core.vocabulary import (
    ADDRESSABLE_SHARDS, DEVICE_ATTRS, DEVICE_CALLS, DEVICE_KEYWORD, DEVICE_PUT_WORD, FRESH_CALLS, ID_ATTRS, JAX,
    JNP_ALIAS, JNP_MAKERS, LOCAL_ASSEMBLIES, LOCAL_COUNT_CALLS, LOCAL_DEVICES_WORD, MESH_BUILDERS, MESH_CTORS,
    MESH_KEYWORD, NAMED_SHARDING_WORD,
    NUMPY_WORD, ONE_DEVICE_PLACERS, ONE_MESH_USES, ORIGIN_KEYWORDS, ORIGINS, REORDER_ATTRS, REORDERS,
    SHAPED_BUILDERS, SHARD_MAP_WORD,
)
from .ast_walk import FIELDS, fields as child_fields, walk

# The API words each path of the gate looks for (core/vocabulary.py): device sources,
# mesh constructors, reorderings, calls that give an array a known mesh, and where such
# an array meets one mesh only (the context mesh, a shard's own device, a fetch).
_FRESH_CALLS = FRESH_CALLS  # device lists in enumeration order
_NOT_LISTS = MESH_CTORS | {NAMED_SHARDING_WORD}
_ONE_MESH_USES = ONE_MESH_USES
_JNP_MAKERS = JNP_MAKERS  # jnp.array(x) and jnp.asarray(x) compute on x's devices: no fetch (RSH305)
# Members a constructor call reaches: ``Cls(...)`` calls them.
CONSTRUCTION = frozenset({"__init__", "__post_init__", "__new__", "__call__", "setup", "__init_subclass__"})


def callee_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _targets(node: ast.AST, names: list[str], attrs: list[str]) -> None:
    if isinstance(node, ast.Name):
        names.append(node.id)
    elif isinstance(node, ast.Attribute):
        attrs.append(node.attr)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            _targets(e, names, attrs)
    elif isinstance(node, ast.Starred):
        _targets(node.value, names, attrs)


class GateFacts:
    """What the gate gathers from a tree; facts of parts of a file add up (components.py).

    Names are kept per scope: a function's locals (its nested functions and lambdas
    included) are its own, keyed by the outermost function's node; module-level and
    class-level names and attributes share scope 0. On a test file hundreds of
    functions reuse ``x``, ``devices`` and ``mesh`` for unrelated values, and one
    module-wide set of device names grew to cover nearly every name of the file.
    """

    __slots__ = ("sources", "reorders", "assigns", "calls", "aliases", "ids", "indexed", "one_mesh_use",
                 "declared_global", "attrs", "functions", "inner", "helpers", "loops")

    def __init__(self) -> None:
        self.sources: list[tuple[int, ast.AST]] = []  # device attributes read (mesh.devices), by scope
        self.reorders: list[tuple[int, ast.AST]] = []
        # (scope, names bound in that scope, attribute names set, value)
        self.assigns: list[tuple[int, list[str], list[str], ast.AST]] = []
        self.calls: list[tuple[str, ast.Call, int]] = []
        self.aliases: dict[str, str] = {}
        self.ids = False  # d.id or str.split: device ids (RSH104)
        self.indexed: list[tuple[int, ast.AST]] = []  # what is indexed by a non-constant, non-slice
        self.one_mesh_use = False  # x.addressable_shards (RSH203 context mesh, RSH302, RSH306)
        self.declared_global: set[tuple[int, str]] = set()  # ``global x`` in a function
        self.attrs: set[str] = set()  # every attribute name read or set (components.py)
        # Scope -> the names that call it (a method of construction: its class's too) ...
        self.functions: dict[int, tuple[str, ...]] = {}
        # ... and the names of the functions and lambdas defined inside it.
        self.inner: dict[int, set[str]] = {}
        # ... and those functions and lambdas themselves, by scope, with their names.
        self.helpers: dict[int, list[tuple[tuple[str, ...], ast.AST]]] = {}
        # Loops and comprehensions: a mesh built in one may be several meshes.
        self.loops: list[ast.AST] = []

    @staticmethod
    def merged(parts: Iterable["GateFacts"]) -> "GateFacts":
        out = GateFacts()
        for p in parts:
            out.sources += p.sources
            out.reorders += p.reorders
            out.assigns += p.assigns
            out.calls += p.calls
            out.aliases.update(p.aliases)
            out.ids = out.ids or p.ids
            out.indexed += p.indexed
            out.one_mesh_use = out.one_mesh_use or p.one_mesh_use
            out.declared_global |= p.declared_global
            out.attrs |= p.attrs
            out.functions.update(p.functions)
            for scope, names in p.inner.items():
                out.inner.setdefault(scope, set()).update(names)
            for scope, nodes in p.helpers.items():
                out.helpers.setdefault(scope, []).extend(nodes)
            out.loops += p.loops
        return out


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_END = ast.AST()  # gate_facts: the end of a function's body on the walk's stack


def gate_facts(tree: ast.AST, owner: str | None = None) -> GateFacts:
    """``owner``: the class whose member ``tree`` is, when it is walked alone (components.py)."""
    facts = GateFacts()
    reorders, assigns, calls, aliases = facts.reorders, facts.assigns, facts.calls, facts.aliases
    sources = facts.sources
    functions, inner, helpers = facts.functions, facts.inner, facts.helpers
    # Decorators of module-level functions and methods run once, where the function is
    # defined: @jtu.with_explicit_mesh(...) makes one mesh however often the test runs.
    defining: set[int] = set()
    owners: dict[int, str] = {}  # a class's members -> the class
    Call, Attribute, Subscript = ast.Call, ast.Attribute, ast.Subscript
    BinOp, ListComp = ast.BinOp, ast.ListComp
    ids = False
    indexed = facts.indexed
    attrs_seen = facts.attrs
    # The walk is inlined (no generator, no (node, scope) pair per node): it is most of
    # the gate's time. A function's body is walked right after its header, in the scope
    # of the outermost function; _END on the stack marks where scope 0 resumes.
    AST, scopes, end, known = ast.AST, _SCOPES, _END, FIELDS
    scope = 0
    stack: list[ast.AST] = [tree]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is end:
            scope = 0
            continue
        # t is type(node), one lookup for the branches; mypy does not narrow node by it,
        # hence the ignores in this loop.
        t = type(node)
        if t is Call:
            calls.append((callee_name(node.func), node,  # type: ignore[attr-defined, arg-type]
                          0 if id(node) in defining else scope))
        elif t is Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            attrs_seen.add(attr)
            if attr in DEVICE_ATTRS:
                sources.append((scope, node))
            elif attr == ADDRESSABLE_SHARDS:
                facts.one_mesh_use = True
            elif attr in REORDER_ATTRS:
                reorders.append((scope, node))
            elif attr in ID_ATTRS:
                ids = True
        elif t is Subscript:
            sl = node.slice  # type: ignore[attr-defined]
            if type(sl) is ast.Slice and sl.step is not None:
                reorders.append((scope, node))
            elif type(sl) is not ast.Slice and type(sl) is not ast.Constant \
                    and type(node.value) in (ast.Call, ast.Name):  # type: ignore[attr-defined]
                # RSH104 reads only lists fresh from jax.devices()/local_devices() (or names
                # bound to them), never a mesh's devices.
                indexed.append((scope, node.value))  # type: ignore[attr-defined]
        elif t is BinOp:
            if (type(node.op) is ast.Add and type(node.left) is Subscript  # type: ignore[attr-defined]
                    and type(node.right) is Subscript):  # type: ignore[attr-defined]
                reorders.append((scope, node))  # d[k:] + d[:k]
        elif t is ListComp:
            facts.loops.append(node)
            if type(node.elt) is Subscript:  # type: ignore[attr-defined]
                reorders.append((scope, node))  # [devs[i] for i in (3, 2, 1, 0)]
        elif t in _LOOPS:
            facts.loops.append(node)
        elif t is ast.Assign or (t is ast.AnnAssign and node.value is not None):  # type: ignore[attr-defined]
            targets = node.targets if t is ast.Assign else [node.target]  # type: ignore[attr-defined]
            names: list[str] = []
            attrs: list[str] = []
            for tg in targets:
                _targets(tg, names, attrs)
            value = node.value  # type: ignore[attr-defined]
            assigns.append((scope, names, attrs, value))
            if len(names) + len(attrs) == 1 and type(value) in (ast.Name, Attribute):
                aliases[(names or attrs)[0]] = callee_name(value)  # NS = jax.sharding.NamedSharding
            elif type(value) is ast.Lambda:
                if scope:
                    inner.setdefault(scope, set()).update(names, attrs)
                    helpers.setdefault(scope, []).append(((*names, *attrs), value))
                else:
                    functions[id(value)] = (*names, *attrs)
        elif t is ast.Global:
            facts.declared_global.update((scope, n) for n in node.names)  # type: ignore[attr-defined]
        elif t is ast.ImportFrom:
            for a in node.names:  # type: ignore[attr-defined]
                if a.asname:
                    aliases[a.asname] = a.name
        elif t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            fname = node.name  # type: ignore[attr-defined]
            cls = owners.get(id(node), owner if scope == 0 else None)
            called = (fname, cls) if cls is not None and fname in CONSTRUCTION else (fname,)
            if scope:
                inner.setdefault(scope, set()).update(called)
                helpers.setdefault(scope, []).append((called, node))
            else:
                functions[id(node)] = called
                defining.update(id(d) for d in node.decorator_list)  # type: ignore[attr-defined]
        elif t is ast.ClassDef:
            for member in node.body:  # type: ignore[attr-defined]
                owners[id(member)] = node.name  # type: ignore[attr-defined]
        if not scope and isinstance(node, scopes):
            push(end)
            scope = id(node)
        kids = known.get(t)
        if kids is None:
            kids = child_fields(t)
        for name in kids:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(value, AST):
                push(value)
    facts.ids = ids
    return facts


class _DeviceNames:
    """Names that hold device lists (not meshes), followed through assignments, per scope."""

    __slots__ = ("names", "attrs")

    def __init__(self, facts: GateFacts) -> None:
        self.names: set[tuple[int, str]] = set()
        self.attrs: set[str] = set()  # attributes, and module- and class-level names
        aliases, declared = facts.aliases, facts.declared_global
        # Each value walked once: (scope, keys it binds, attributes it sets, does it call or
        # read a device source itself, the names it reads, the attributes it reads).
        pending = []
        for scope, names, attrs, value in facts.assigns:
            called = callee_name(value.func) if isinstance(value, ast.Call) else None
            if called is not None and aliases.get(called, called) in _NOT_LISTS:
                continue
            direct, read, read_attrs = _reads(value, aliases)
            keys = [(0, n) if scope == 0 or (scope, n) in declared else (scope, n) for n in names]
            pending.append((scope, keys, attrs, direct, read, read_attrs))
        changed = True
        while changed and pending:
            changed = False
            rest = []
            for item in pending:
                scope, keys, attrs, direct, read, read_attrs = item
                if direct or read_attrs & self.attrs or any(
                        (scope, n) in self.names or (0, n) in self.names for n in read):
                    for k in keys:
                        self.names.add(k)
                        if k[0] == 0:
                            self.attrs.add(k[1])  # a module or class variable, read as an attribute too
                    self.attrs.update(attrs)
                    changed = True
                else:
                    rest.append(item)
            pending = rest

    def mentioned(self, node: ast.AST, scope: int, aliases: dict[str, str]) -> bool:
        direct, read, read_attrs = _reads(node, aliases)
        return direct or bool(read_attrs & self.attrs) or any(
            (scope, n) in self.names or (0, n) in self.names for n in read)


def _reads(node: ast.AST, aliases: dict[str, str]) -> tuple[bool, set[str], set[str]]:
    """Does ``node`` call or read a device source itself; the names and attributes it reads."""
    names: set[str] = set()
    attrs: set[str] = set()
    Call, Attribute, Name = ast.Call, ast.Attribute, ast.Name
    for sub in walk(node):
        # t is type(node), one lookup for the branches; mypy does not narrow sub by it,
        # hence the ignores below.
        t = type(sub)
        if t is Call:
            f = callee_name(sub.func)  # type: ignore[attr-defined]
            if aliases.get(f, f) in DEVICE_CALLS:
                return True, names, attrs
        elif t is Attribute:
            if sub.attr in DEVICE_ATTRS:  # type: ignore[attr-defined]
                return True, names, attrs
            attrs.add(sub.attr)  # type: ignore[attr-defined]
        elif t is Name:
            names.add(sub.id)  # type: ignore[attr-defined]
    return False, names, attrs


def decide(facts: GateFacts, imported: frozenset[str] = frozenset()) -> bool:
    """The gate's verdict on the facts of a file (or of the parts of it that matter).
    ``imported``: names bound by imports of project modules that may hold device values
    (project/imported.py); each one handed to a call counts as a mesh built here."""
    source_scopes: list[tuple[int, ast.AST | None]] = []
    counted: set[int] = set()  # nodes whose devices another source already counts
    in_meshes: set[int] = set()  # nodes inside a mesh constructor's arguments
    reorders = list(facts.reorders)
    calls, aliases = facts.calls, facts.aliases
    ids, indexed = facts.ids, facts.indexed
    ctors = 0
    ctor_nodes: list[tuple[int, ast.Call]] = []
    origin = False
    one_mesh_use = facts.one_mesh_use
    device_target = False  # device_put(x, devs[k]) or device_put(x, d)
    shardings: list[tuple[int, ast.Call]] = []
    shaped = local_count = False  # a builder, and this process's device count (RSH307)
    local_source = assembly = False  # jax.local_devices(), and local data assembled (RSH304)
    for raw, node, scope in calls:
        name = aliases.get(raw, raw)
        shaped = shaped or name in SHAPED_BUILDERS
        local_count = local_count or name in LOCAL_COUNT_CALLS
        local_source = local_source or name == LOCAL_DEVICES_WORD
        assembly = assembly or name in LOCAL_ASSEMBLIES
        if name in DEVICE_CALLS:
            counted.add(id(node.func))  # jax.devices() is one source, not a call and an attribute
            if id(node) not in counted:
                source_scopes.append((scope, node))
        elif name in MESH_CTORS:
            ctors += 1
            ctor_nodes.append((scope, node))
            inside = {id(sub) for arg in (*node.args, *node.keywords) for sub in walk(arg)}
            in_meshes |= inside  # calls come parents first
            if name in MESH_BUILDERS and id(node) not in counted:
                # make_mesh takes jax.devices() itself: one source with the devices it is given.
                # Mesh(devs, ...) is not a source of its own: its devices are counted where
                # they are made (a call, an attribute, a call site feeding a parameter), and a
                # mesh of devices the file does not make is unknown to the analysis.
                source_scopes.append((scope, node))
                counted |= inside
        elif name in REORDERS:
            reorders.append((scope, node))
        elif name in ORIGINS:
            origin = True
            if name == DEVICE_PUT_WORD:
                target = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == DEVICE_KEYWORD), None)
                device_target = device_target or type(target) in (ast.Subscript, ast.Name)
                if target is None and node.args:
                    one_mesh_use = True  # device_put(x): the single-device path (RSH301)
        elif name == NAMED_SHARDING_WORD:
            shardings.append((scope, node))
        elif name in ONE_DEVICE_PLACERS:
            device_target = True  # jax.default_device(d), SingleDeviceSharding(d), x.to_device(d)
        elif name in _ONE_MESH_USES and id(node) not in in_meshes \
                and not (raw in _JNP_MAKERS and _on_jnp(node.func)):  # not np.array(jax.devices())
            one_mesh_use = True
        if not origin and any(k.arg in ORIGIN_KEYWORDS for k in node.keywords):
            origin = True
        if not device_target and any(k.arg == DEVICE_KEYWORD and type(k.value) in (ast.Subscript, ast.Name)
                                     for k in node.keywords):
            device_target = True  # jnp.zeros(n, device=devs[0])
        if not origin and name == "partial" and node.args and callee_name(node.args[0]) == SHARD_MAP_WORD:
            origin = True
    if shaped and local_count:
        return True  # RSH307: a builder that may be shaped by this process's device count
    if ctors and local_source and assembly:
        return True  # RSH304: a mesh of this process's devices may hold an assembled global array
    source_scopes += [(scope, node) for scope, node in facts.sources if id(node) not in counted]
    if imported:
        used, called = _imported_arguments(facts, imported)
        ctors += used
        source_scopes += [(0, None)] * used
        # An imported function that moves arrays: its body may move what this file hands
        # it (project/defs.py).
        origin = origin or called
    sources = _instances(source_scopes, facts) if (ctors and origin) or device_target else 0
    if ctors and sources >= 2 and origin:
        return True  # RSH2xx/RSH3xx: an array with a known mesh and a second device source
    named: _DeviceNames | None = None  # built once, for this test or the reorders' below
    if sources and origin and ctor_nodes:
        # Two meshes from one device source: `devs = jax.devices()`, then meshes of
        # `devs` and of `devs[:4]` (or of a filter of it, or one per turn of a loop).
        named = _DeviceNames(facts)
        fed = [c for scope, c in ctor_nodes if named.mentioned(c, scope, aliases)]
        if len(fed) >= 2 or any(_within(c, loop) for c in fed for loop in facts.loops):
            return True
    if ctors and origin and one_mesh_use:
        return True  # RSH203 under a context mesh, RSH305, RSH301 without a target
    if device_target and sources:
        return True  # RSH306: a device of the global list used as this process's, whatever the array
    if any(id(r) in in_meshes for _, r in reorders):
        # Mesh(trainer.mesh.devices.T, ...): a reordering written in the constructor, of
        # devices this file may not make (a parameter another module's call feeds).
        return True
    if imported and any(_made_by_imported(c, scope, facts, imported) for scope, c in ctor_nodes):
        return True  # RSH101/RSH102: the list's order is the imported function's (a rotation there)
    if not (ctors and reorders) and not shardings and not (ids and indexed):
        return False
    devices = named or _DeviceNames(facts)
    if ctors and any(devices.mentioned(r, scope, aliases) for scope, r in reorders):
        return True  # RSH101/RSH102
    if ids and indexed:
        # A list fresh from jax.devices()/local_devices(), or a name bound to one: a dict
        # keyed by id (the right lookup) built from them is not such a list.
        fresh = {(scope, n) for scope, names, _, value in facts.assigns if len(names) == 1
                 and isinstance(value, ast.Call)
                 and aliases.get(callee_name(value.func), callee_name(value.func)) in _FRESH_CALLS for n in names}
        for scope, v in indexed:
            if isinstance(v, ast.Name) and ((scope, v.id) in fresh or (0, v.id) in fresh) \
                    or isinstance(v, ast.Call) and aliases.get(callee_name(v.func), callee_name(v.func)) in _FRESH_CALLS:
                return True  # RSH104
    for scope, call in shardings:  # RSH103
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == MESH_KEYWORD), None)
        if first is None or (isinstance(first, ast.Call) and aliases.get(callee_name(first.func), "") in MESH_CTORS
                             or isinstance(first, ast.Call) and callee_name(first.func) in MESH_CTORS):
            continue
        if devices.mentioned(first, scope, aliases):
            return True
    return False


def _imported_call(node: ast.AST, imported: frozenset[str]) -> bool:
    """A call of a function imported from the project that may make device values:
    ``order()`` or ``config.order()``."""
    if type(node) is not ast.Call:
        return False
    func = node.func
    if type(func) is ast.Name:
        return func.id in imported
    return type(func) is ast.Attribute and type(func.value) is ast.Name \
        and f"{func.value.id}.{func.attr}" in imported


def _made_by_imported(ctor: ast.Call, scope: int, facts: GateFacts, imported: frozenset[str]) -> bool:
    """Are a mesh's devices (or part of them) what an imported function returns, called
    in the constructor's arguments or bound to a name they use? Its order, a reordering
    included, is made in the other module, where no call builds this mesh."""
    inside = [sub for arg in (*ctor.args, *ctor.keywords) for sub in walk(arg)]
    if any(_imported_call(sub, imported) for sub in inside):
        return True
    used = {sub.id for sub in inside if type(sub) is ast.Name}
    return any(_imported_call(value, imported) for at, names, _, value in facts.assigns
               if at in (scope, 0) and used.intersection(names))


def _imported_arguments(facts: GateFacts, imported: frozenset[str]) -> tuple[int, bool]:
    """How many device values the imported names hand to calls: a name itself
    (``NamedSharding(TRAIN, ...)``, or an element of it: ``SHARDINGS['params']``), or an
    attribute of a module imported whole (named
    ``meshes.`` in ``imported``: ``meshes.TRAIN`` and ``meshes.ROLLOUT`` are two); a star
    import counts as two. And whether a function that moves arrays is called."""
    used: set[str] = set()
    moved = False
    for _, node, _ in facts.calls:
        func = node.func
        heads = [*node.args, *(k.value for k in node.keywords)]
        # An imported function that may make device values: each call may make others
        # (make_mesh() and make_mesh(2)), and one call several (a pair of meshes).
        called = None
        if type(func) is ast.Name and func.id in imported:
            called = func.id
        elif type(func) is ast.Attribute and type(func.value) is ast.Name:
            if f"{func.value.id}.{func.attr}" in imported:  # meshes.make_mesh(2)
                called = f"{func.value.id}.{func.attr}"
        elif type(func) is ast.Subscript:
            # An element of an imported name called: MESHES["train"]() of a registry
            # (registries.py), or meshes.MESHES["train"]().
            root: ast.AST = func
            attrs: list[str] = []
            while type(root) is ast.Subscript or type(root) is ast.Attribute:
                if isinstance(root, ast.Attribute):
                    attrs.append(root.attr)
                root = root.value
            if type(root) is ast.Name:
                if root.id in imported:
                    called = f"{root.id}[]"
                elif attrs and f"{root.id}." in imported:
                    called = f"{root.id}.{attrs[-1]}[]"
        if called is not None:
            used |= {f"{called}()@{id(node)}", f"{called}()@{id(node)}#2"}
            moved = moved or called + ">" in imported
        elif type(func) is ast.Attribute and type(func.value) is not ast.Name:
            heads.append(func.value)  # meshes.TRAIN.devices()
        for arg in heads:
            if type(arg) is ast.Starred:
                arg = arg.value
            chain: list[str] = []
            key = ""  # the subscript right on the name: SHARDINGS['train'] and ['rollout'] are two
            while type(arg) is ast.Attribute or type(arg) is ast.Subscript:
                if isinstance(arg, ast.Attribute):
                    chain.append(arg.attr)
                    key = ""
                else:
                    sl = arg.slice
                    key = f"[{sl.value!r}]" if type(sl) is ast.Constant else "[]"
                arg = arg.value
            if type(arg) is not ast.Name:
                continue
            name = arg.id
            if name in imported:
                used.add(name + key)
            elif chain and name + "." in imported:
                used.add(f"{name}.{chain[-1]}")
    return (max(len(used), 2) if "*" in imported else len(used)), moved or "*" in imported


def _instances(sources: list[tuple[int, ast.AST | None]], facts: GateFacts) -> int:
    """How many device values the sources (their scopes and nodes) can give, up to 2.

    The analysis evaluates a function's body at each call it follows: one
    ``jax.make_mesh(shape, ...)`` in a helper called with two shapes is two meshes.
    """
    if len(sources) != 1 or sources[0][0] == 0:
        return min(len(sources), 2)
    calls: dict[str, list[int]] = {}  # a called name -> the scopes of its calls
    passed: set[str] = set()  # names handed to a call: partial(f), jax.jit(f), callbacks
    aliases = facts.aliases
    for raw, call, scope in facts.calls:
        calls.setdefault(aliases.get(raw, raw), []).append(scope)
        for arg in (*call.args, *(k.value for k in call.keywords)):
            if type(arg) in (ast.Name, ast.Attribute, ast.Starred):
                n = callee_name(arg.value if type(arg) is ast.Starred else arg)
                passed.add(aliases.get(n, n))
    scope, node = sources[0]
    return _times(scope, frozenset(), facts, calls, passed, node)


def _times(scope: int, seen: frozenset[int], facts: GateFacts, calls: dict[str, list[int]],
           passed: set[str], node: ast.AST | None = None) -> int:
    """How many times the function of ``scope`` runs, up to 2; with ``node``, how many
    times ``node`` in it does. A module-level function, not a closure calling itself:
    that would be a reference cycle holding the file's tree until the next collection."""
    if scope == 0:
        return 1
    if scope in seen:
        return 2  # recursion
    outer = 0
    for n in facts.functions.get(scope, ()):
        if n in passed:
            return 2
        outer += sum(_times(s, seen | {scope}, facts, calls, passed) for s in calls.get(n, ()))
    if node is None:
        repeated = any(n in passed or len(calls.get(n, ())) >= 2 for n in facts.inner.get(scope, ()))
    else:
        repeated = any(_within(node, helper) for names, helper in facts.helpers.get(scope, ())
                       if any(n in passed or len(calls.get(n, ())) >= 2 for n in names))
    if repeated:
        outer = 2 * max(outer, 1)  # in a helper defined in the function, called twice
    return min(max(outer, 1), 2)


def _within(node: ast.AST, outer: ast.AST) -> bool:
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    # (ast.AST declares no positions; every node here has them)
    return ((outer.lineno, outer.col_offset) <= start  # type: ignore[attr-defined]
            and end <= (outer.end_lineno, outer.end_col_offset))  # type: ignore[attr-defined]


def _on_jnp(func: ast.AST) -> bool:
    """``jnp.f`` or ``jax.numpy.f``."""
    base = getattr(func, "value", None)
    return type(base) is ast.Name and base.id == JNP_ALIAS or type(base) is ast.Attribute \
        and base.attr == NUMPY_WORD and type(base.value) is ast.Name and base.value.id == JAX
