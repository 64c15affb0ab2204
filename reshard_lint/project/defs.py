"""A module's functions and classes another module may call for a device value, from
Python's tree (``device_functions``, the gate's), and every function it may call
(``callable_names``, the analysis's).

``from mypkg.meshes import make_mesh`` then ``make_mesh(2)``: the analysis runs the
function's body with the caller's arguments, as it runs a helper of the same file;
``Trainer(2)`` runs the class's ``__init__`` for that instance. Only a module-level
``def`` or ``class`` whose code builds devices counts (a device source, a mesh
constructor, or a module-level name bound to one: the gate's test, imported.py): such a
name gets the importing file analysed, and the module a summary that keeps those bodies
(module_text.py). A function that takes a mesh and builds a sharding on it does not: its
callers that have a mesh of their own pass the gate by it. A definition's code is its
node's (module_tree.Code: its signature after the name, its body and its decorators,
strings and comments blanked): a line in column 0 inside a string is still in the body,
a word in a docstring or a comment builds nothing. The engine asks the same test, so it
agrees.

Standard library only: the gate runs where the engine is not imported.
"""

from __future__ import annotations

import ast

from ..core.vocabulary import BUILD_WORDS, MOVE_WORDS, SOURCE_WORDS
from ..stages.ast_walk import own_scope
from .module_scan import IDENT, module_values
from .module_tree import NO_NAMES, Code, code_of, per_tree

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
# The words (core/vocabulary.py), tested on a definition's code: what builds devices
# itself (SOURCE_WORDS: a function that only forwards a mesh it is given, as most
# functions that say "mesh" or "sharding", makes nothing its caller does not have); and
# what moves arrays (MOVE_WORDS: a function that puts what it is given on a mesh it is
# given can fail for one caller's arguments, functions.py runs it for each call).
_MOVE_NAMES = tuple(w.rstrip("(") for w in MOVE_WORDS)


def _spans(code: Code, node: Def) -> list[tuple[int, int, ast.AST]]:
    """The spans of a definition's code: its decorators, and everything after its name."""
    keyword = "class" if type(node) is ast.ClassDef else "def"
    at = code.text.find(keyword, code.start(node)) + len(keyword)
    name = code.text.find(node.name, at)  # (-1: a name spelled otherwise, NFKC)
    out: list[tuple[int, int, ast.AST]] = [(code.start(d), code.end(d), d) for d in node.decorator_list]
    out.append((name + len(node.name) if name >= 0 else at, code.end(node), node))
    return out


def _says(code: Code, node: Def, words: tuple[str, ...]) -> bool:
    """Does the definition's code hold one of ``words``?"""
    return any(code.says(a, b, words) for a, b, _ in _spans(code, node))


def _names(code: Code, node: Def, names: set[str]) -> bool:
    """Does the definition's code spell one of ``names`` (as a word)?"""
    for a, b, _ in _spans(code, node):
        for m in IDENT.finditer(code.text, a, b):
            if m.group(0) in names and code.in_code(m.start()):
                return True
    return False


def _returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does the function give its caller something: a ``return`` of a value other than
    ``None`` in its own scope, or a ``yield``?"""
    for node in own_scope(fn.body):
        t = type(node)
        if t is ast.Return and node.value is not None and not (  # type: ignore[attr-defined]
                type(node.value) is ast.Constant and node.value.value is None):  # type: ignore[attr-defined]
            return True
        if t is ast.Yield or t is ast.YieldFrom:
            return True
    return False


def spelled(text: str, words: tuple[str, ...]) -> bool:
    """May the tree of ``text`` hold a name that contains one of ``words``? (A text test
    before the tree is read, sound: an ASCII text spells each name as the tree holds it;
    a name outside ASCII may stand for another, NFKC.)"""
    return not text.isascii() or any(w in text for w in words)


def _definitions(tree: ast.Module) -> list[Def]:
    return [s for s in tree.body if isinstance(s, (*_FUNCS, ast.ClassDef))]


def _moving_functions(tree: ast.Module, text: str) -> frozenset[str]:
    """The functions of ``device_functions`` that move what they are given: a call of one
    places an array (the gate counts it as a placed array)."""
    if "def" not in text or not spelled(text, _MOVE_NAMES):
        return frozenset()  # no call of a mover is spelled (nor a module function that calls one)
    return frozenset(_movers(tree, text)) & device_functions(text)


moving_functions = per_tree(_moving_functions, NO_NAMES)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
             *([a.kwarg] if a.kwarg else [])]
    return {p.arg for p in every} - {"self", "cls"}


def _movers(tree: ast.Module, text: str) -> set[str]:
    """Functions whose bodies hand one of their parameters to a move (the array, or the
    target: ``device_put(x, NamedSharding(mesh, P()))``), or to another such function of
    the module (``place(v, sharding=target)``); a body that moves only what it makes
    itself (``device_put(jnp.array(True), sharding)``) moves nothing its caller gives.
    A body with branches counts too: the analysis follows a call of it where the call's
    values decide them (functions.relayed)."""
    code = code_of(text, tree)
    fns = {fn.name: fn for fn in tree.body if isinstance(fn, _FUNCS)}
    calls: dict[str, list[tuple[str, bool, set[str]]]] = {}  # function -> (callee, plain name, names read)

    def calls_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, bool, set[str]]]:
        found = calls.get(fn.name)
        if found is None:
            found = calls[fn.name] = []
            for node in ast.walk(fn):
                if type(node) is ast.Call:
                    f = node.func
                    name = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else ""
                    if name:
                        read = {n.id for arg in (*node.args, *(k.value for k in node.keywords))
                                for n in ast.walk(arg) if type(n) is ast.Name}
                        found.append((name, type(f) is ast.Name, read))
        return found

    out: set[str] = set()
    words = _MOVE_NAMES
    for _ in range(3):  # through at most two helpers of the module
        # (a function whose text names no move nor mover calls none: its tree is not walked)
        more = {name for name, fn in fns.items() if name not in out
                and (not code.ascii or any(w in code.text[code.start(fn): code.end(fn)] for w in words))
                and any((callee.endswith(_MOVE_NAMES) or plain and callee in out) and not _params(fn).isdisjoint(read)
                        for callee, plain, read in calls_of(fn))}
        if not more:
            break
        out |= more
        words = (*_MOVE_NAMES, *sorted(out))
    return out


def _device_functions(tree: ast.Module, text: str) -> frozenset[str]:
    """Names of the module-level functions that return something, and classes, whose
    code builds device values: a device source or a mesh constructor, or a module-level
    name the module binds to one; and of the functions that return something and move
    what they are given (``jax.device_put``, a sharding constraint, ``reshard`` of a
    parameter, or onto one; or hand it to such a function of the module): a caller's
    arguments decide whether such a move fails (functions.py)."""
    if "def" not in text and "class" not in text:
        return frozenset()
    moves = spelled(text, _MOVE_NAMES)
    if not moves and not any(w in text for w in SOURCE_WORDS):
        # No code says a source (nor can a module-level name bound to one: ``_held``)
        # and none moves: the walk below would add nothing.
        return frozenset()
    code = code_of(text, tree)
    held: set[str] | None = None  # module-level names bound to device values, when needed
    movers = _movers(tree, text) if moves else set()
    out: set[str] = set()
    for node in _definitions(tree):
        is_fn = type(node) is not ast.ClassDef
        if is_fn and node.name in movers:
            if _returns(node):  # type: ignore[arg-type]
                out.add(node.name)
            continue
        if _says(code, node, SOURCE_WORDS):
            builds = True
        else:
            if held is None:
                held = _held(text)
            builds = bool(held) and _names(code, node, held)
        if builds and (not is_fn or _returns(node)):  # type: ignore[arg-type]
            out.add(node.name)  # (a function that gives its caller nothing, an assert_*: nothing to follow)
    return frozenset(out)


device_functions = per_tree(_device_functions, NO_NAMES)


def _held(text: str) -> set[str]:
    """The module-level names bound to a value built from devices: a device source or a
    mesh constructor, or one of these names (``STEP = jax.jit(f, out_shardings=
    NamedSharding(TRAIN, P()))``), through at most three bindings."""
    values = module_values(text)
    held = {name for name, vs in values.items() if any(w in v.code for v in vs for w in SOURCE_WORDS)}
    for _ in range(3):
        more = {name for name, vs in values.items() if name not in held
                and any(not held.isdisjoint(IDENT.findall(v.code)) for v in vs)}
        if not more:
            break
        held |= more
    return held


def _callable_names(tree: ast.Module, text: str) -> frozenset[str]:
    """Names of the module-level functions (every ``def``), the classes that build
    shardings or move arrays (``building_classes``), and of the names bound once
    at module level to a call (``step = jax.jit(_step, out_shardings=...)``,
    ``call_bindings``): what an importer may call, whose call the analysis runs as it runs
    a function of the same file when the summary holds a function there
    (summaries.callable_export). Not the gate's: a function that builds no device value
    gives its caller nothing to pass the gate by (``device_functions``)."""
    out = {s.name for s in tree.body if isinstance(s, _FUNCS)}
    return frozenset(out) | call_bindings(text) | building_classes(text)


callable_names = per_tree(_callable_names, NO_NAMES)


def _building_classes(tree: ast.Module, text: str) -> frozenset[str]:
    """Names of the module-level classes whose code builds a sharding or a mesh, or moves
    arrays (``BUILD_WORDS``: ``NamedSharding(self.mesh, P())``, ``jax.device_put(...)``):
    an importer's instance of one (``Trainer(mesh)``) gives it the shardings and arrays
    its methods and properties make of what the construction passed. Not the gate's (a
    class that builds no devices gives nothing its caller does not have)."""
    if "class" not in text or not any(w in text for w in BUILD_WORDS):
        return frozenset()
    code = code_of(text, tree)
    return frozenset(s.name for s in tree.body if type(s) is ast.ClassDef
                     and _says(code, s, BUILD_WORDS))


building_classes = per_tree(_building_classes, NO_NAMES)


def call_bindings(text: str) -> frozenset[str]:
    """Names bound once at module level to a call: a jitted function, or a mesh."""
    return frozenset(name for name, values in module_values(text).items() if len(values) == 1 and values[0].call)


def _config_classes(tree: ast.Module, text: str) -> frozenset[str]:
    """Names of the module-level dataclasses (under ``@dataclass`` or
    ``@dataclasses.dataclass``, called or not): a configuration an importer constructs
    (``cfg = Config()``) and reads fields of (``cfg.dp``), which the analysis follows as
    it follows a dataclass of the same file; its summary keeps their bodies."""
    if not spelled(text, ("dataclass",)):
        return frozenset()
    return frozenset(s.name for s in tree.body if type(s) is ast.ClassDef
                     and any(_dataclass(d) for d in s.decorator_list))


config_classes = per_tree(_config_classes, NO_NAMES)


def _dataclass(dec: ast.expr) -> bool:
    head = dec.func if type(dec) is ast.Call else dec
    return type(head) is ast.Name and head.id == "dataclass" or type(head) is ast.Attribute \
        and head.attr == "dataclass" and type(head.value) is ast.Name and head.value.id == "dataclasses"
