"""Line and column of a node, paid for per reported statement instead of per module.

libcst's ``PositionProvider`` generates the code of the whole module to learn where each
node is; on a 12,000-line test file that costs more than the parse. A diagnostic needs
the position of a few nodes, so positions are found here for one statement at a time:

* Python's tree of the same text says on which line each statement starts (the two
  trees list statements in the same order; a libcst line of ``a; b`` is two of
  Python's statements);
* the statement alone is generated with libcst's own position-recording code
  generator, started at that line with its block's indentation. A compound statement
  is generated with an empty body (its header: a ``def`` line, an ``if`` test, an
  ``except`` clause), the statements in its body being statements of their own;
* the generated text must equal the file's text at that line, or the module-wide pass
  is used instead. Code generation records positions from the text it has emitted, so
  the same text at the same place gives the same lines and columns as the whole-module
  pass, exactly.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from . import newer_syntax
# Whitespace is never a diagnostic's node: not indexed (a request for one falls back).
from .cst_children import KINDS, NODE as _NODE, SEQUENCE as _SEQUENCE
from .cst_children import fields as _fields, kind as _kind
from .fixes import split_lines

_NEWLINE = re.compile(r"\r\n?|\n")
# Bodies of compound statements hold statements of their own; the header is the rest.
_BODIES = ("body", "orelse", "handlers", "finalbody")


class _Unit:
    """A statement (or an ``except`` clause, an ``elif``) whose code is generated alone."""

    __slots__ = ("node", "line", "indents", "header", "elif_")

    def __init__(self, node: cst.CSTNode, line: int, indents: tuple[str, ...], header: bool,
                 elif_: bool = False) -> None:
        self.node = node
        self.line = line  # where Python's tree says the statement starts
        self.indents = indents  # the indentation of the enclosing blocks
        self.header = header  # generated with an empty body
        self.elif_ = elif_


class NodePositions(Mapping[cst.CSTNode, CodeRange]):
    """What ``MetadataWrapper(module).resolve(PositionProvider)`` gives, computed lazily."""

    def __init__(self, module: cst.Module, text: str, tree: ast.Module | None = None) -> None:
        self._module = module
        self._text = text if text.endswith(("\n", "\r")) or not text else text + module.default_newline
        self._tree = tree
        self._index: dict[int, _Unit] | None = None
        self._starts: list[int] | None = None
        self._done: dict[cst.CSTNode, CodeRange] = {}
        self._whole: Mapping[cst.CSTNode, CodeRange] | None = None

    # -- Mapping ---------------------------------------------------------------------
    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._done.get(node)
        if found is not None:
            return found
        if self._whole is None:
            unit = self._units().get(id(node))
            if unit is not None and self._generate(unit):
                found = self._done.get(node)
                if found is not None:
                    return found
        return self._module_wide()[node]

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._module_wide())

    def __len__(self) -> int:
        return len(self._module_wide())

    def _module_wide(self) -> Mapping[cst.CSTNode, CodeRange]:
        if self._whole is None:
            self._whole = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._whole

    # -- one statement -----------------------------------------------------------------
    def _generate(self, unit: _Unit) -> bool:
        node = unit.node
        target: cst.CSTNode = node
        if unit.header:
            changes: dict[str, object] = {"body": node.body.with_changes(body=(), footer=())}  # type: ignore[attr-defined]
            for name in _BODIES[1:]:
                if hasattr(node, name):
                    changes[name] = () if name == "handlers" else None
            target = node.with_changes(**changes)
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent, default_newline=self._module.default_newline,
            provider=provider, indent_tokens=list(unit.indents))
        if unit.elif_:
            target._codegen(state, is_elif=True)  # type: ignore[call-arg]
        else:
            target._codegen(state)
        computed: dict[cst.CSTNode, CodeRange] = provider._computed  # type: ignore[attr-defined]
        emitted = "".join(state.tokens)
        if unit.header:
            # Only the header is the file's text: the empty body generates "pass".
            body_line = computed[target.body].start.line  # type: ignore[attr-defined]
            emitted = "".join(_split(emitted)[:body_line - 1])
        shift = unit.line - computed[target].start.line
        if not self._matches(emitted, 1 + shift):
            return False
        done = self._done
        skip = {target, getattr(target, "body", None)} if unit.header else set()
        for n, rng in computed.items():
            if n not in skip:
                done[n] = CodeRange((rng.start.line + shift, rng.start.column), (rng.end.line + shift, rng.end.column))
        return True

    def _matches(self, emitted: str, first_line: int) -> bool:
        if self._starts is None:
            starts = [0]
            for line in split_lines(self._text):
                starts.append(starts[-1] + len(line))
            self._starts = starts
        if first_line < 1 or first_line > len(self._starts):
            return False
        at = self._starts[first_line - 1]
        return self._text.startswith(emitted, at)

    # -- which statement holds a node --------------------------------------------------
    def statement_index(self) -> Mapping[int, object]:
        """The ids of the nodes this module's statements hold (which module a node is
        from); empty where Python cannot parse the text."""
        return self._units()

    def _units(self) -> dict[int, _Unit]:
        if self._index is None:
            self._index = {}
            tree = self._tree
            if tree is None:
                try:
                    tree = newer_syntax.parse(self._text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    return self._index  # positions come from the module-wide pass
            try:
                self._block(self._module.body, tree.body, ())
            except (_Mismatch, IndexError, AttributeError):
                self._index = {}
            self._tree = None
        return self._index

    def _block(self, stmts: Sequence[cst.BaseStatement], pys: list[ast.stmt], indents: tuple[str, ...]) -> None:
        i = 0
        for stmt in stmts:
            py = pys[i]
            if isinstance(stmt, cst.SimpleStatementLine):
                i += len(stmt.body)
                self._own(stmt, _Unit(stmt, py.lineno, indents, header=False))
                continue
            i += 1
            self._compound(stmt, py, indents)
        if i != len(pys):
            raise _Mismatch

    def _compound(self, stmt: cst.CSTNode, py: ast.AST, indents: tuple[str, ...], elif_: bool = False) -> None:
        body = getattr(stmt, "body", None)
        kinds = {cst.FunctionDef: ast.FunctionDef, cst.ClassDef: ast.ClassDef, cst.If: ast.If,
                 cst.For: ast.For, cst.While: ast.While, cst.With: ast.With, cst.Try: ast.Try,
                 cst.ExceptHandler: ast.ExceptHandler}
        expected = kinds.get(type(stmt))
        if isinstance(stmt, cst.FunctionDef) and stmt.asynchronous is not None:
            expected = ast.AsyncFunctionDef
        elif isinstance(stmt, cst.For) and stmt.asynchronous is not None:
            expected = ast.AsyncFor
        elif isinstance(stmt, cst.With) and stmt.asynchronous is not None:
            expected = ast.AsyncWith
        if expected is None or not isinstance(body, cst.IndentedBlock):
            # One-line bodies, match statements, try* ...: the whole statement is one unit.
            if not isinstance(py, ast.stmt) and not isinstance(py, ast.ExceptHandler):
                raise _Mismatch
            self._own(stmt, _Unit(stmt, _first_line(py), indents, header=False, elif_=elif_))
            return
        if not isinstance(py, expected):
            raise _Mismatch
        self._index[id(stmt)] = _Unit(stmt, _first_line(py), indents, header=False, elif_=elif_)  # type: ignore[index]
        if not isinstance(stmt, cst.Try):
            header = _Unit(stmt, _first_line(py), indents, header=True, elif_=elif_)
            for name in _fields(type(stmt)):
                if name not in _BODIES:
                    self._own_value(getattr(stmt, name), header)
        self._block(body.body, py.body, self._inner(body, indents))  # type: ignore[attr-defined]
        if isinstance(stmt, cst.Try):
            handlers = py.handlers  # type: ignore[attr-defined]
            if len(handlers) != len(stmt.handlers):
                raise _Mismatch
            for h, ph in zip(stmt.handlers, handlers):
                self._compound(h, ph, indents)
            if stmt.finalbody is not None:
                block = _suite(stmt.finalbody.body)
                self._block(block.body, py.finalbody, self._inner(block, indents))  # type: ignore[attr-defined]
        orelse = getattr(stmt, "orelse", None)
        if isinstance(orelse, cst.If):
            pyelse = py.orelse  # type: ignore[attr-defined]
            if len(pyelse) != 1:
                raise _Mismatch
            self._compound(orelse, pyelse[0], indents, elif_=True)
        elif isinstance(orelse, cst.Else):
            block = _suite(orelse.body)
            self._block(block.body, py.orelse, self._inner(block, indents))  # type: ignore[attr-defined]

    def _inner(self, block: cst.IndentedBlock, indents: tuple[str, ...]) -> tuple[str, ...]:
        return (*indents, self._module.default_indent if block.indent is None else block.indent)

    def _own(self, node: cst.CSTNode, unit: _Unit) -> None:
        index = self._index
        assert index is not None
        stack = [node]
        pop, push, kinds = stack.pop, stack.append, KINDS
        # cst_children.children inlined: the index visits every node of the file, and
        # the generator costs a fifth more here.
        while stack:
            n = pop()
            index[id(n)] = unit
            for name in _fields(type(n)):
                value = getattr(n, name)
                kind = kinds.get(type(value))
                if kind is None:
                    kind = _kind(type(value))
                if kind == _NODE:
                    push(value)
                elif kind == _SEQUENCE:
                    for v in value:
                        k = kinds.get(type(v))
                        if k is None:
                            k = _kind(type(v))
                        if k == _NODE:
                            push(v)

    def _own_value(self, value: object, unit: _Unit) -> None:
        kind = _kind(type(value))
        if kind == _NODE:
            self._own(value, unit)  # type: ignore[arg-type]
        elif kind == _SEQUENCE:
            for v in value:  # type: ignore[attr-defined]
                self._own_value(v, unit)


class _Mismatch(Exception):
    """The two trees do not line up: use the module-wide pass."""


def _suite(body: cst.BaseSuite) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return body
    raise _Mismatch  # an ``else: x`` on one line: rare, not worth a unit of its own


def _first_line(py: ast.AST) -> int:
    # Decorators come before the ``def`` in the text; libcst's position of the
    # statement starts at ``def``, as Python's line does.
    return py.lineno  # type: ignore[attr-defined,no-any-return]


def _split(text: str) -> list[str]:
    out: list[str] = []
    last = 0
    for m in _NEWLINE.finditer(text):
        out.append(text[last:m.end()])
        last = m.end()
    if last < len(text):
        out.append(text[last:])
    return out

