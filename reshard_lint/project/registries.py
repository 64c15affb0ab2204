"""Module-level containers filed into by the module's own functions: registries.

``MESHES = {}`` with ``@register("train")`` over a mesh builder, whose inner function runs
``MESHES[name] = fn``: the module body fills the dict (the analysis runs those calls in
order: flow.store_global), and an importer reads ``MESHES["train"]`` after it. That is
what the dict holds only if no other code can file into it later: another module that
calls ``register("train")`` (a plugin imported first replaces the item), a function that
keeps ``register`` or the dict to call or change later. ``sealed`` says, from Python's
trees of the module and of every module of the project that names the dict or a filing
function, that nothing but the module body's own statements can. Dynamic access
(``getattr(module, "register")``, ``globals()``) and code outside the project are not
seen.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Iterator

from ..stages.ast_walk import own_scope

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Reads of a dict that change nothing in it.
_READ_METHODS = frozenset({"get", "keys", "values", "items", "copy", "__contains__", "__getitem__"})
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist"})


def candidates(tree: ast.Module) -> frozenset[str]:
    """Names the module body binds once, at its top, to an empty or literal dict, that a
    function of the module stores an item into (``name[k] = v``)."""
    if not any(_dict_display(stmt) for stmt in tree.body):
        return frozenset()  # (the walk below finds no name bound to a dict display either)
    bound: dict[str, int] = {}
    for stmt in tree.body:
        for target in _targets(stmt):
            if type(target) is ast.Name:
                bound[target.id] = bound.get(target.id, 0) + (2 if not _dict_display(stmt) else 1)
    once = {n for n, c in bound.items() if c == 1}
    if not once:
        return frozenset()
    found: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, _FUNCS):
            for node in ast.walk(stmt):
                if type(node) is ast.Subscript and type(node.ctx) is ast.Store and type(node.value) is ast.Name \
                        and node.value.id in once:
                    found.add(node.value.id)
    return frozenset(found)


def may_file_into(text: str, name: str) -> bool:
    """May ``name`` be among ``registry_names(text)``, from the text alone? A line of the
    module begins with it (the one binding at the module's top that ``candidates`` asks
    for: ``name = {}``, ``name: dict = {}``), or with a parenthesis, or a semicolon is
    followed on its line by the name, a parenthesis or a line continuation (``x = 1;
    name = {}``); and the text subscripts it (``name[k]``, with blanks, comments or line
    continuations before the bracket: every store into the dict is such a subscript).
    False rules ``name`` out without parsing the module: most names an importer asks
    about are neither. A text outside ASCII may spell the identifier otherwise (NFKC):
    True."""
    if not text.isascii():
        return True
    # str.find, not a regex that starts with a lookbehind: that tries every position.
    i = text.find(name)
    while i >= 0:
        if (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")) \
                and _BRACKET.match(text, i + len(name)) is not None:
            break
        i = text.find(name, i + 1)
    else:
        return False
    word = re.escape(name)
    return re.search(rf"(?m)^\f*(?:{word}(?!\w)|\()", text) is not None or ";" in text and re.search(
        rf"(?m);[^\n]*(?:(?<![\w.]){word}(?!\w)|\(|\\\r?$)", text) is not None


# What may stand between a name and the bracket of its subscript.
_BRACKET = re.compile(r"(?:[ \t\f\r\n\\]|#[^\n]*\n)*\[")


def registry_names(text: str) -> frozenset[str]:
    """``candidates`` of a module's text (the project layer's text memo keeps it per content)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    return candidates(tree)


def decorated_by_own(tree: ast.Module) -> frozenset[str]:
    """Module-level functions under a decorator of the module's own (``@register("x")``):
    the body a registry's importer calls."""
    own = {s.name for s in tree.body if isinstance(s, _FUNCS)}
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, _FUNCS):
            for dec in stmt.decorator_list:
                head = dec.func if type(dec) is ast.Call else dec
                if type(head) is ast.Name and head.id in own:
                    out.add(stmt.name)
    return frozenset(out)


def filers(tree: ast.Module, name: str) -> frozenset[str] | None:
    """The module's functions that may file into ``name`` (store into it, or name such a
    function), where each is reached only as the module body's own plain calls and
    decorators and ``name`` is otherwise only read; None where some code could file into
    it at another time, or change it otherwise."""
    defs: dict[str, list[ast.AST]] = {}
    methods: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, _FUNCS):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.ClassDef):
            methods |= {s.name for s in node.body if isinstance(s, _FUNCS)}
    s: set[str] = set()
    changed = True
    while changed:
        changed = False
        for fname, nodes in defs.items():
            if fname in s:
                continue
            for fn in nodes:
                if any(type(n) is ast.Name and (n.id == name and type(n.ctx) is not ast.Load or n.id in s)
                       or type(n) is ast.Subscript and type(n.ctx) is not ast.Load and _is(n.value, name)
                       for stmt in fn.body for n in ast.walk(stmt)):  # type: ignore[attr-defined]
                    s.add(fname)
                    changed = True
                    break
    if s & methods or any(type(n) is ast.Lambda and any(type(m) is ast.Name and m.id in s | {name}
                                                          for m in ast.walk(n)) for n in ast.walk(tree)):
        return None
    parents = _parents(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if type(node) is ast.Name and node.id == name and not _use_of_dict(node, parents, tree, s):
            return None
        if type(node) is ast.Name and node.id in s and not _use_of_filer(node, parents, tree, s):
            return None
    # A function a filer returns (``register`` returns ``decorate``) is applied at once;
    # what it returns in turn must be no filer (``decorate`` returns the function it files).
    for fname in s:
        for fn in defs[fname]:
            for ret in _returns(fn):
                if type(ret.value) is ast.Name and ret.value.id in s:
                    inner = defs.get(ret.value.id, [])
                    if any(type(r.value) is ast.Name and r.value.id in s for f in inner for r in _returns(f)):
                        return None
    return frozenset(s)


def named_elsewhere(tree: ast.Module, names: frozenset[str], dict_name: str) -> bool:
    """Does another module's tree name a filer, or the dict other than to read it?"""
    parents = _parents(tree)
    # The dict imported under another name (``from .meshes import MESHES as TABLE``).
    dicts = {dict_name} | {a.asname for a in ast.walk(tree)
                           if type(a) is ast.alias and a.asname and a.name.split(".")[-1] == dict_name}
    for node in ast.walk(tree):
        if type(node) is ast.Name:
            ident = node.id
        elif type(node) is ast.Attribute:
            ident = node.attr
        elif type(node) is ast.alias:
            ident = (node.asname or node.name).split(".")[-1]
            if node.name.split(".")[-1] in names:
                return True
            continue
        else:
            continue
        if ident in names:
            return True
        if ident in dicts and not _read(node, parents):
            return True
    return False


def project_files(roots: tuple[str, ...]) -> Iterator[str]:
    """The ``.py`` files under the import roots (not in hidden or build directories)."""
    seen: set[str] = set()
    for root in roots:
        for here, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                             and not os.path.exists(os.path.join(here, d, "pyvenv.cfg")))
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(here, f)
                    if path not in seen:
                        seen.add(path)
                        yield path


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if type(stmt) is ast.Assign:
        return list(stmt.targets)
    if type(stmt) is ast.AnnAssign or type(stmt) is ast.AugAssign:
        return [stmt.target]
    out: list[ast.expr] = []
    for node in ast.walk(stmt):
        if type(node) is ast.Name and type(node.ctx) is ast.Store:
            out.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(ast.Name(node.name, ast.Store()))
        elif type(node) is ast.alias:
            out.append(ast.Name((node.asname or node.name).split(".")[0], ast.Store()))
    return out


def _dict_display(stmt: ast.stmt) -> bool:
    value = stmt.value if type(stmt) is ast.Assign and len(stmt.targets) == 1 \
        or type(stmt) is ast.AnnAssign else None
    return type(value) is ast.Dict or type(value) is ast.Call and type(value.func) is ast.Name \
        and value.func.id == "dict" and not value.args and not value.keywords


def _is(node: ast.AST, name: str) -> bool:
    return type(node) is ast.Name and node.id == name


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _read(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """``node`` (the dict) read, not changed or handed on: ``d[k]``, ``d.get(k)``,
    ``k in d``, ``len(d)``, iterated."""
    up = parents.get(id(node))
    if type(up) is ast.Subscript and up.value is node:
        return type(up.ctx) is ast.Load and not (type(parents.get(id(up))) is ast.AugAssign)
    if type(up) is ast.Attribute and up.value is node:
        return up.attr in _READ_METHODS and type(parents.get(id(up))) is ast.Call
    if type(up) is ast.Compare:
        return node in up.comparators and all(type(o) in (ast.In, ast.NotIn) for o in up.ops)
    if type(up) is ast.Call and type(up.func) is ast.Name and up.func.id == "len":
        return True
    if isinstance(up, (ast.For, ast.comprehension)):
        return up.iter is node
    if type(up) is ast.alias or type(up) is ast.ImportFrom:
        return True
    return False


def _top_statement(node: ast.AST, parents: dict[int, ast.AST], tree: ast.Module) -> ast.AST | None:
    """The module-level statement ``node`` is in, None inside a function, class or lambda."""
    while True:
        up = parents.get(id(node))
        if up is None:
            return None
        if up is tree:
            return node
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and node not in up.decorator_list:
            return None
        if isinstance(up, (ast.ClassDef, ast.Lambda)):
            return None
        node = up


def _inside(node: ast.AST, parents: dict[int, ast.AST], names: set[str]) -> bool:
    """Is ``node`` in the body of one of the functions ``names``?"""
    up = parents.get(id(node))
    while up is not None:
        if isinstance(up, _FUNCS) and up.name in names and node not in up.decorator_list:
            return True
        node, up = up, parents.get(id(up))
    return False


def _use_of_dict(node: ast.Name, parents: dict[int, ast.AST], tree: ast.Module, filers: set[str]) -> bool:
    up = parents.get(id(node))
    if type(node.ctx) is ast.Store:
        # the module's one binding of it (candidates: bound once)
        return type(up) in (ast.Assign, ast.AnnAssign) and parents.get(id(up)) is tree
    if type(up) is ast.Subscript and up.value is node and type(up.ctx) is ast.Store:
        # ``d[k] = v`` in a filer, or in the module body (run there in order)
        assign = parents.get(id(up))
        return type(assign) is ast.Assign and (_inside(node, parents, filers)
                                               or parents.get(id(assign)) is tree)
    return _read(node, parents)


def _use_of_filer(node: ast.Name, parents: dict[int, ast.AST], tree: ast.Module, filers: set[str]) -> bool:
    up = parents.get(id(node))
    if _inside(node, parents, filers):
        # called, or returned by the function it is defined in (``return decorate``)
        return type(up) is ast.Call and up.func is node or type(up) is ast.Return
    if _top_statement(node, parents, tree) is None:
        return False
    # At the module's top: ``@register("x")``, ``@filer``, ``register("x")(fn)``, ``filer(...)``.
    call = up if type(up) is ast.Call and up.func is node else None
    if call is None:
        owner = parents.get(id(node))
        return isinstance(owner, _FUNCS) and node in owner.decorator_list
    outer = parents.get(id(call))
    if type(outer) is ast.Call and outer.func is call:
        outer_up = parents.get(id(outer))
        return type(outer_up) is ast.Expr
    return type(outer) is ast.Expr or isinstance(outer, _FUNCS) and call in outer.decorator_list


def _returns(fn: ast.AST) -> Iterator[ast.Return]:
    return (node for node in own_scope(fn.body) if type(node) is ast.Return)  # type: ignore[attr-defined]
