"""What a module's code says, read from Python's tree (module_tree.py: one parse per
content in a process): its import statements, its module-level bindings and the names
its code spells. The gate's import following (imported.py), the functions importers may
call (defs.py) and the interface hashes (interface.py) read them. A text that does not
parse says nothing: no imports, no bindings (its summary is unknown to its importers).
"""

from __future__ import annotations

import ast
import re
from typing import Callable, NamedTuple, TypeVar

from ..core.vocabulary import VALUE_PATTERN
from .guarded import guarded_statements
from .module_tree import NO_NAMES, Code, code_of, per_tree, statements

T = TypeVar("T")
IDENT = re.compile(r"[A-Za-z_]\w*")
# (dots, module, ((name, alias or ""), ...)): ``from ..m import a as b, c``; ``*`` as (("*", ""),)
FromImport = tuple[str, str, tuple[tuple[str, str], ...]]


def _import_lines(tree: ast.Module, text: str) -> tuple[list[FromImport], list[tuple[str, str]]]:
    """(from-imports as (dots, module, names), ``import a.b as m`` as (module, alias)):
    every import statement of the module, at any depth."""
    froms: list[FromImport] = []
    imports: list[tuple[str, str]] = []
    if "import" not in text:
        return froms, imports
    for stmt in statements(tree.body):
        t = type(stmt)
        if t is ast.ImportFrom:
            names = tuple((a.name, a.asname or "") for a in stmt.names)  # type: ignore[attr-defined]
            froms.append(("." * stmt.level, stmt.module or "", names))  # type: ignore[attr-defined]
        elif t is ast.Import:
            imports.extend((a.name, a.asname) for a in stmt.names if a.asname)  # type: ignore[attr-defined]
    return froms, imports


_NO_IMPORTS: tuple[list[FromImport], list[tuple[str, str]]] = ([], [])
import_lines = per_tree(_import_lines, _NO_IMPORTS)


def _star_imports(tree: ast.Module, text: str) -> list[tuple[str, str]]:
    """The modules a module's top-level ``from m import *`` statements name, as (dots, module)."""
    if "*" not in text:
        return []
    return [("." * s.level, s.module or "") for s in tree.body
            if type(s) is ast.ImportFrom and s.names[0].name == "*"]


_NO_STARS: list[tuple[str, str]] = []
star_imports = per_tree(_star_imports, _NO_STARS)


def _code_names(tree: ast.Module, text: str) -> frozenset[str]:
    """Every name the module's code spells (not its comments or strings), and the
    strings of its ``__all__`` (what ``from m import *`` takes, a module ``__getattr__``
    may give them); empty when it does not parse."""
    out: set[str] = set()
    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Name:
            out.add(node.id)  # type: ignore[attr-defined]
        elif t is ast.Attribute:
            out.add(node.attr)  # type: ignore[attr-defined]
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.add(node.name)  # type: ignore[attr-defined]
        elif t is ast.arg:
            out.add(node.arg)  # type: ignore[attr-defined]
        elif t is ast.keyword and node.arg:  # type: ignore[attr-defined]
            out.add(node.arg)  # type: ignore[attr-defined]
        elif t is ast.alias:
            out.update(node.name.split("."))  # type: ignore[attr-defined]
            if node.asname:  # type: ignore[attr-defined]
                out.add(node.asname)  # type: ignore[attr-defined]
        elif t is ast.ImportFrom and node.module:  # type: ignore[attr-defined]
            out.update(node.module.split("."))  # type: ignore[attr-defined]
        elif t in (ast.Global, ast.Nonlocal):
            out.update(node.names)  # type: ignore[attr-defined]
        elif t is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
            out.add(node.name)  # type: ignore[attr-defined]
        elif t in (ast.MatchAs, ast.MatchStar) and node.name:  # type: ignore[attr-defined]
            out.add(node.name)  # type: ignore[attr-defined]
        elif t is ast.MatchMapping and node.rest:  # type: ignore[attr-defined]
            out.add(node.rest)  # type: ignore[attr-defined]
        elif t is ast.MatchClass:
            out.update(node.kwd_attrs)  # type: ignore[attr-defined]
    for value in module_values(text).get("__all__", ()):
        out.update(value.strings)
    return frozenset(out)


code_names = per_tree(_code_names, NO_NAMES, together=False)


def per_content(memo: dict[tuple[object, ...], object], path: str | None, text_digest: str | None, text: str,
                compute: Callable[[str], T]) -> T:
    """``compute(text)`` of the project file at ``path``, once per file and content in
    a project's ``memo``."""
    key = (compute.__name__, path, text_digest)
    found = memo.get(key)
    if found is None:
        found = memo[key] = compute(text)
    return found  # type: ignore[return-value]  # (what compute returned under this key)


class Value(NamedTuple):
    """The value of one module-level binding."""

    text: str  # as written after its ``=`` (continuation lines, no comment after it)
    code: str  # the same, its strings and comments blanked (module_tree.Code)
    names: frozenset[str]  # the names it reads
    attributes: tuple[tuple[str, str], ...]  # ``head.attr`` it reads (a chain's head: ``a.b`` of ``a.b.c``)
    call: bool  # a call of a name or an attribute chain (``jax.jit(f)``, ``make(2)``, ``f(x)(y)``)
    literal: bool  # numbers, a string, True or False, tuples of them, literal arithmetic
    constructs: str  # ``Cls`` of ``Cls()`` with no arguments, or ""
    strings: tuple[str, ...]  # its string literals that are names (``__all__ = ["TRAIN"]``)


def _targets(target: ast.expr) -> list[str]:
    if type(target) is ast.Name:
        return [target.id]
    if type(target) in (ast.Tuple, ast.List):
        return [n for el in target.elts for n in _targets(el)]  # type: ignore[attr-defined]
    if type(target) is ast.Starred:
        return _targets(target.value)
    return []


def _module_values(tree: ast.Module, text: str) -> dict[str, tuple[Value, ...]]:
    """The module-level bindings (an assignment in the module body, or directly inside a
    module-level ``if``, ``try`` or ``with`` block on a line of its own: guarded.py):
    each target name with the values bound to it, in order."""
    if "=" not in text:
        return {}  # every assignment spells one
    code = code_of(text, tree)
    found: dict[str, list[Value]] = {}
    stmts: list[ast.stmt] = list(tree.body)
    if "\n " in text or "\n\t" in text:
        stmts += guarded_statements(tree, text.split("\n"))
    for stmt in stmts:
        t = type(stmt)
        if t is ast.Assign:
            targets, value, before = stmt.targets, stmt.value, stmt.targets[-1]  # type: ignore[attr-defined]
        elif t is ast.AnnAssign and stmt.value is not None:  # type: ignore[attr-defined]
            targets, value, before = [stmt.target], stmt.value, stmt.annotation  # type: ignore[attr-defined]
        elif t is ast.AugAssign:
            targets, value, before = [stmt.target], stmt.value, stmt.target  # type: ignore[attr-defined]
        else:
            continue
        names = [n for target in targets for n in _targets(target)]
        if names:
            v = _value(code, value, code.text.find("=", code.end(before)) + 1)
            for name in names:
                found.setdefault(name, []).append(v)
    return {name: tuple(values) for name, values in found.items()}


_NO_VALUES: dict[str, tuple[Value, ...]] = {}
module_values = per_tree(_module_values, _NO_VALUES)


def _value(code: Code, node: ast.expr, start: int) -> Value:
    end = code.end(node)
    names: set[str] = set()
    attributes: list[tuple[str, str]] = []
    strings: list[str] = []
    for n in ast.walk(node):
        if type(n) is ast.Name:
            names.add(n.id)
        elif type(n) is ast.Attribute and type(n.value) is ast.Name:
            attributes.append((n.value.id, n.attr))
        elif type(n) is ast.Constant and isinstance(n.value, str) and n.value.isidentifier():
            strings.append(n.value)
    heads = {head for head, _ in attributes}
    callee: ast.expr = node
    while type(callee) in (ast.Call, ast.Attribute):
        callee = callee.func if type(callee) is ast.Call else callee.value  # type: ignore[attr-defined]
    constructs = node.func.id if type(node) is ast.Call and type(node.func) is ast.Name \
        and not node.args and not node.keywords else ""
    return Value(code.text[start:end], code.span(start, end, node), frozenset(names - heads), tuple(attributes),
                 type(node) is ast.Call and type(callee) is ast.Name, _literal(node), constructs, tuple(strings))


def _literal(node: ast.expr) -> bool:
    t = type(node)
    if t is ast.Constant:
        return isinstance(node.value, (int, float, str)) and node.value is not None  # type: ignore[attr-defined]
    if t is ast.Tuple:
        return all(_literal(el) for el in node.elts)  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return _literal(node.operand)  # type: ignore[attr-defined]
    if t is ast.BinOp:
        return _literal(node.left) and _literal(node.right)  # type: ignore[attr-defined]
    return False


def bindings(text: str) -> dict[str, list[str]]:
    """The module-level bindings of a text: each name with its values as written."""
    return {name: [v.text for v in values] for name, values in module_values(text).items()}


_VALUE = re.compile(VALUE_PATTERN)


def any_value(text: str) -> bool:
    """May a module-level name of ``text`` be bound to a device value: the code of some
    module-level binding's value names devices, meshes, shardings or transfers?"""
    return any(_VALUE.search(v.code) for values in module_values(text).values() for v in values)
