"""Expressions in libcst's shape: arguments in source order, subscripts by element,
boolean operations nested to the left, tuples and generator expressions placed inside
their parentheses, and each expression's own parentheses kept for its code.
"""

from __future__ import annotations

import ast
from typing import Any

from . import nodes as n
from .placing import Placing

_BINARY = {ast.Add: n.Add, ast.Sub: n.Subtract, ast.Mult: n.Multiply, ast.Div: n.Divide,
           ast.FloorDiv: n.FloorDivide, ast.Mod: n.Modulo, ast.Pow: n.Power, ast.MatMult: n.MatrixMultiply,
           ast.LShift: n.LeftShift, ast.RShift: n.RightShift, ast.BitOr: n.BitOr, ast.BitAnd: n.BitAnd,
           ast.BitXor: n.BitXor}
_UNARY = {ast.USub: n.Minus, ast.UAdd: n.Plus, ast.Not: n.Not, ast.Invert: n.BitInvert}
_BOOLEAN = {ast.And: n.And, ast.Or: n.Or}
_COMPARE = {ast.Eq: n.Equal, ast.NotEq: n.NotEqual, ast.Lt: n.LessThan, ast.LtE: n.LessThanEqual,
            ast.Gt: n.GreaterThan, ast.GtE: n.GreaterThanEqual, ast.In: n.In, ast.NotIn: n.NotIn,
            ast.Is: n.Is, ast.IsNot: n.IsNot}
_COMPREHENSIONS = {ast.ListComp: n.ListComp, ast.SetComp: n.SetComp, ast.GeneratorExp: n.GeneratorExp}


class Expressions(Placing):
    """Expressions; ``_expr`` (build.py) maps Python's node types to the methods here."""

    _expr: dict[type, Any]

    def expr(self, e: ast.expr) -> Any:
        t = type(e)
        if t is ast.Tuple or t is ast.GeneratorExp:
            return self.inside(self._expr[t](e), e)
        handler = self._expr.get(t)
        if handler is None:  # a newer Python's expression
            parts = [self.expr(c) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)]
            return self.at(n.OtherExpression(parts), e)
        node = self.at(handler(e), e)
        line, col = node._span[0], node._span[1]
        if col and self.lines[line - 1][col - 1] in "( \t":  # else no parenthesis of its own
            outer = self.t.expand(*node._span[:4])
            if outer != node._span[:4]:
                self.tag.outer[id(node)] = outer
        return node

    def own_parens(self, value: n.CSTNode, floor: Any) -> None:
        """An argument: the call's parenthesis is not the value's own."""
        key = id(value)
        if key in self.tag.outer:
            narrowed = self.t.expand(*value._span[:4], floor)
            if narrowed == value._span[:4]:
                del self.tag.outer[key]
            else:
                self.tag.outer[key] = narrowed

    def _name(self, e: ast.Name) -> n.CSTNode:
        return n.Name(e.id)

    def _attribute(self, e: ast.Attribute) -> n.CSTNode:
        end_col = self.col(e.end_lineno, e.end_col_offset)  # type: ignore[arg-type]
        attr = self.spanned(n.Name(e.attr), e.end_lineno, end_col - len(e.attr), e.end_lineno, end_col)
        return n.Attribute(self.expr(e.value), attr)

    def _call(self, e: ast.Call) -> n.CSTNode:
        func = self.expr(e.func)
        floor = self.t.next_sig(func._span[2], func._span[3])
        while floor is not None and self.t.char(floor) == ")":  # (f)(x)
            floor = self.t.next_sig(floor[0], floor[1] + 1)
        args = []
        for a in e.args:
            if type(a) is ast.Starred:
                args.append(self.at(n.Arg(self.expr(a.value), None, "*"), a))
            else:
                value = self.expr(a)
                self.own_parens(value, floor)
                args.append(self.wrap(n.Arg(value, None, ""), value, floor))
        if e.keywords:
            keywords = [self.keyword(k) for k in e.keywords]
            args += keywords
            if len(args) > len(keywords) and keywords[0]._span[:2] < args[len(args) - len(keywords) - 1]._span[:2]:
                args.sort(key=lambda a: a._span[:2])  # f(k=1, *rest): source order, as libcst's
        return n.Call(func, args)

    def keyword(self, k: ast.keyword) -> n.CSTNode:
        value = self.expr(k.value)
        if k.arg is None:
            return self.at(n.Arg(value, None, "**"), k)
        col = self.col(k.lineno, k.col_offset)
        name = self.spanned(n.Name(k.arg), k.lineno, col, k.lineno, col + len(k.arg))
        return self.at(n.Arg(value, name, ""), k)

    def _subscript(self, e: ast.Subscript) -> n.CSTNode:
        s = e.slice
        if type(s) is ast.Tuple and s.elts and not self._parenthesized(s):
            elements = [self.subscript_element(x) for x in s.elts]
        else:
            elements = [self.subscript_element(s)]
        return n.Subscript(self.expr(e.value), elements)

    def _parenthesized(self, e: ast.expr) -> bool:
        text = self.source_of(e)
        if not (text.startswith("(") and text.endswith(")")):
            return False
        depth = 0
        for i, ch in enumerate(text):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0 and i < len(text) - 1:
                    return False
        return True

    def subscript_element(self, s: ast.expr) -> n.CSTNode:
        if type(s) is ast.Slice:
            inner: n.CSTNode = self.expr(s)
        elif type(s) is ast.Starred:
            value = self.expr(s.value)
            inner = self.at(n.Index(value, "*"), s)
        else:
            value = self.expr(s)
            inner = self.parts(n.Index(value, None), value, value)
        return self.between(n.SubscriptElement(inner), inner, inner)

    def _slice_expr(self, e: ast.Slice) -> n.CSTNode:
        return n.Slice(self.opt(e.lower), self.opt(e.upper), self.opt(e.step))

    def elements(self, elts: list[ast.expr]) -> list[n.CSTNode]:
        out = []
        for x in elts:
            if type(x) is ast.Starred:
                out.append(self.at(n.StarredElement(self.expr(x.value)), x))
            else:
                value = self.expr(x)
                out.append(self.parts(n.Element(value), value, value))
        return out

    def _starred(self, e: ast.Starred) -> n.CSTNode:  # outside a list, tuple or call: an assignment target
        return n.StarredElement(self.expr(e.value))

    def _tuple(self, e: ast.Tuple) -> n.CSTNode:
        return n.Tuple(self.elements(e.elts))

    def inside(self, node: n.CSTNode, e: ast.expr) -> n.CSTNode:
        """libcst places a tuple or a generator expression inside its parentheses and
        the blanks there (a tuple's trailing comma included); Python around them."""
        self.at(node, e)
        if not self._parenthesized(e):
            return node
        line, col, end_line, end_col, tag = node._span
        self.tag.outer[id(node)] = (line, col, end_line, end_col)
        t = self.t
        if isinstance(node, n.Tuple) and not node.elements:  # (): libcst places it between the two
            node._span = (line, col + 1, line, col + 1, tag)
            return node
        start = t.next_sig(line, col + 1) or (line, col + 1)
        if isinstance(node, n.Tuple):
            last = node.elements[-1]._span
            end = (last[2], last[3])
            after = t.next_sig(*end)
            if after is not None and t.char(after) == ",":
                end = (after[0], after[1] + 1)
        else:
            before = t.prev_sig(end_line, end_col - 1)
            end = (before[0], before[1] + 1) if before is not None else (end_line, end_col - 1)
        node._span = (start[0], start[1], end[0], end[1], tag)
        return node

    def _list(self, e: ast.List) -> n.CSTNode:
        return n.List(self.elements(e.elts))

    def _set(self, e: ast.Set) -> n.CSTNode:
        return n.Set(self.elements(e.elts))

    def _dict(self, e: ast.Dict) -> n.CSTNode:
        out = []
        for k, v in zip(e.keys, e.values):
            value = self.expr(v)
            if k is None:
                ex = self.t.expand(*value._span[:4])
                star = self.t.prev_sig(ex[0], ex[1])
                start = (star[0], max(star[1] - 1, 0)) if star is not None else (ex[0], ex[1])
                out.append(self.spanned(n.StarredDictElement(value), start[0], start[1], ex[2], ex[3]))
            else:
                key = self.expr(k)
                out.append(self.parts(n.DictElement(key, value), key, value))
        return n.Dict(out)

    def _binop(self, e: ast.BinOp) -> n.CSTNode:
        return n.BinaryOperation(self.expr(e.left), _BINARY[type(e.op)](), self.expr(e.right))

    def _unaryop(self, e: ast.UnaryOp) -> n.CSTNode:
        return n.UnaryOperation(_UNARY[type(e.op)](), self.expr(e.operand))

    def _boolop(self, e: ast.BoolOp) -> n.CSTNode:
        values = [self.expr(v) for v in e.values]
        op = _BOOLEAN[type(e.op)]
        node = values[0]
        for right in values[1:-1]:
            node = self.parts(n.BooleanOperation(node, op(), right), values[0], right)
        return n.BooleanOperation(node, op(), values[-1])

    def _compare(self, e: ast.Compare) -> n.CSTNode:
        targets = []
        for op, comparator in zip(e.ops, e.comparators):
            value = self.expr(comparator)
            targets.append(self.between(n.ComparisonTarget(_COMPARE[type(op)](), value), value, value))
        return n.Comparison(self.expr(e.left), targets)

    def _ifexp(self, e: ast.IfExp) -> n.CSTNode:
        return n.IfExp(self.expr(e.test), self.expr(e.body), self.expr(e.orelse))

    def _lambda(self, e: ast.Lambda) -> n.CSTNode:
        return n.Lambda(self.parameters(e.args, e), self.expr(e.body))

    def _namedexpr(self, e: ast.NamedExpr) -> n.CSTNode:
        return n.NamedExpr(self.expr(e.target), self.expr(e.value))

    def _await(self, e: ast.Await) -> n.CSTNode:
        return n.Await(self.expr(e.value))

    def _yield(self, e: ast.Yield) -> n.CSTNode:
        return n.Yield(self.opt(e.value))

    def _yield_from(self, e: ast.YieldFrom) -> n.CSTNode:
        value = self.expr(e.value)
        line, col = e.lineno, self.col(e.lineno, e.col_offset) + len("yield")
        keyword = self.t.next_sig(line, col) or (line, col)
        return n.Yield(self.spanned(n.From(value), keyword[0], keyword[1], value._span[2], value._span[3]))

    def for_in(self, generators: list[ast.comprehension], before: n.CSTNode) -> n.CSTNode:
        """The ``for`` clauses after ``before`` (the element, or the value of a dict's)."""
        built = []
        for g in generators:
            target, iter_ = self.expr(g.target), self.expr(g.iter)
            ifs = []
            for test in g.ifs:
                value = self.expr(test)
                ifs.append(self.between(n.CompIf(value), value, value))
            built.append((n.CompFor(target, iter_, ifs, None, n.Asynchronous() if g.is_async else None),
                          ifs[-1] if ifs else iter_))
        inner: Any = None
        ends = [self.t.expand(*last._span[:4]) for _, last in built]
        for i in range(len(built) - 1, -1, -1):
            node, last = built[i]
            node.inner_for_in = inner
            start = self.after(before if i == 0 else built[i - 1][1])
            end = ends[-1]
            inner = self.spanned(node, start[0], start[1], end[2], end[3])
        return inner

    def _comp(self, e: Any) -> n.CSTNode:
        elt = self.expr(e.elt)
        return _COMPREHENSIONS[type(e)](elt, self.for_in(e.generators, elt))

    def _dictcomp(self, e: ast.DictComp) -> n.CSTNode:
        value = self.expr(e.value)
        return n.DictComp(self.expr(e.key), value, self.for_in(e.generators, value))
