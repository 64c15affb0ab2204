"""Statements in libcst's shape: small statements grouped by line, blocks, ``elif``.

Which small statements share a line (``a = 1; b = 2``) and whether a block is on its
header's line (``if x: return y``) are read from the positions; ``elif`` against
``else: if`` from the text at the inner ``if``.
"""

from __future__ import annotations

import ast
from typing import Any

from . import nodes as n
from .placing import Placing

_AUGMENTED = {ast.Add: n.AddAssign, ast.Sub: n.SubtractAssign, ast.Mult: n.MultiplyAssign,
              ast.Div: n.DivideAssign, ast.FloorDiv: n.FloorDivideAssign, ast.Mod: n.ModuloAssign,
              ast.Pow: n.PowerAssign, ast.MatMult: n.MatrixMultiplyAssign, ast.LShift: n.LeftShiftAssign,
              ast.RShift: n.RightShiftAssign, ast.BitOr: n.BitOrAssign, ast.BitAnd: n.BitAndAssign,
              ast.BitXor: n.BitXorAssign}
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.Try, ast.With, ast.AsyncWith, ast.Match, getattr(ast, "TryStar", ast.Try))


class Statements(Placing):
    """Statements; their expressions come from the expression builder (``expr``)."""

    def opt(self, e: ast.expr | None) -> Any:
        return None if e is None else self.expr(e)

    def statements(self, body: list[ast.stmt]) -> list[n.CSTNode]:
        out: list[n.CSTNode] = []
        line: list[n.CSTNode] = []
        last_end = -1
        for stmt in body:
            if isinstance(stmt, _COMPOUND):
                if line:
                    out.append(self._line(line))
                    line = []
                out.append(self.compound(stmt))
                continue
            if line and stmt.lineno != last_end:
                out.append(self._line(line))
                line = []
            line.append(self.small(stmt))
            last_end = stmt.end_lineno or stmt.lineno
        if line:
            out.append(self._line(line))
        return out

    def _line(self, smalls: list[n.CSTNode]) -> n.CSTNode:
        return self.between(n.SimpleStatementLine(smalls), smalls[0], smalls[-1])

    def suite(self, body: list[ast.stmt]) -> n.CSTNode:
        first = body[0]
        before = self.lines[first.lineno - 1][:self.col(first.lineno, first.col_offset)]
        if before.strip() and not isinstance(first, _COMPOUND):
            # On its header's line: ``if x: return y``, its small statements directly.
            smalls = [self.small(s) for s in body]
            return self.between(n.SimpleStatementSuite(smalls), smalls[0], smalls[-1])
        stmts = self.statements(body)
        return self.between(n.IndentedBlock(stmts), stmts[0], stmts[-1])

    def small(self, s: ast.stmt) -> n.CSTNode:
        t = type(s)
        if t is ast.Expr:
            node: n.CSTNode = n.Expr(self.expr(s.value))
        elif t is ast.Assign:
            node = n.Assign([self.at(n.AssignTarget(self.expr(x)), x) for x in s.targets], self.expr(s.value))
        elif t is ast.AugAssign:
            node = n.AugAssign(self.expr(s.target), _AUGMENTED[type(s.op)](), self.expr(s.value))
        elif t is ast.AnnAssign:
            node = n.AnnAssign(self.expr(s.target), self.at(n.Annotation(self.expr(s.annotation)), s.annotation),
                               self.opt(s.value))
        elif t is ast.Return:
            node = n.Return(self.opt(s.value))
        elif t is ast.Pass:
            node = n.Pass()
        elif t is ast.Break:
            node = n.Break()
        elif t is ast.Continue:
            node = n.Continue()
        elif t is ast.Raise:
            exc = self.opt(s.exc)
            cause = None
            if s.cause is not None:
                item = self.expr(s.cause)
                line, col = self.after(exc) if exc is not None else item._span[:2]
                keyword = self.t.next_sig(line, col) or (line, col)
                cause = self.spanned(n.From(item), keyword[0], keyword[1], item._span[2], item._span[3])
            node = n.Raise(exc, cause)
        elif t is ast.Assert:
            node = n.Assert(self.expr(s.test), self.opt(s.msg))
        elif t is ast.Delete:
            targets = [self.expr(x) for x in s.targets]
            target = targets[0] if len(targets) == 1 else self.between(
                n.Tuple([self.parts(n.Element(x), x, x) for x in targets]), targets[0], targets[-1])
            node = n.Del(target)
        elif t is ast.Global or t is ast.Nonlocal:
            items = [n.NameItem(self.word(name, s.lineno, self.col(s.lineno, s.col_offset))) for name in s.names]
            for item in items:
                self.between(item, item.name, item.name)
            node = (n.Global if t is ast.Global else n.Nonlocal)(items)
        elif t is ast.Import:
            node = n.Import([self.alias(a, s) for a in s.names])
        elif t is ast.ImportFrom:
            names: Any = n.ImportStar() if s.names[0].name == "*" else [self.alias(a, s) for a in s.names]
            module = self.dotted(s.module, s.lineno, self.col(s.lineno, s.col_offset)) if s.module else None
            node = n.ImportFrom(module, names, [n.Dot() for _ in range(s.level or 0)])
        else:  # type aliases (Python 3.12), and what a newer Python adds: nothing to read
            node = n.Pass()
        return self.at(node, s)

    def alias(self, a: ast.alias, stmt: ast.stmt) -> n.CSTNode:
        line = getattr(a, "lineno", stmt.lineno)
        col = self.col(line, getattr(a, "col_offset", stmt.col_offset))
        name = self.dotted(a.name, line, col)
        asname = None
        if a.asname:
            alias_name = self.word(a.asname, line, name._span[3] + 1)
            asname = self.as_name(alias_name)
        node = n.ImportAlias(name, asname)
        return self.between(node, name, asname or name)

    def dotted(self, dotted: str, line: int, col: int) -> n.CSTNode:
        """``a.b.c`` as libcst spells an import's module: Attribute(Attribute(a, b), c)."""
        parts = dotted.split(".")
        first = self.word(parts[0], line, col)
        node: n.CSTNode = first
        for part in parts[1:]:
            attr = self.word(part, line, node._span[3])
            node = self.spanned(n.Attribute(node, attr), line, first._span[1], line, attr._span[3])
        return node

    def compound(self, s: Any) -> n.CSTNode:
        t = type(s)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            decorators = [self.decorator(d) for d in s.decorator_list]
            col = self.col(s.lineno, s.col_offset)
            keyword = self.lines[s.lineno - 1].find("def", col)  # the name is after it, never in ``async def``
            name = self.word(s.name, s.lineno, (keyword if keyword >= 0 else col) + 3)
            node: n.CSTNode = n.FunctionDef(
                name, self.parameters(s.args, s), self.suite(s.body), decorators,
                self.at(n.Annotation(self.expr(s.returns)), s.returns) if s.returns is not None else None,
                n.Asynchronous() if t is ast.AsyncFunctionDef else None)
        elif t is ast.ClassDef:
            col = self.col(s.lineno, s.col_offset)
            node = n.ClassDef(self.word(s.name, s.lineno, col + 6), self.suite(s.body),
                              [self.at(n.Arg(self.expr(b), None, ""), b) for b in s.bases],
                              [self.keyword(k) for k in s.keywords], [self.decorator(d) for d in s.decorator_list])
        elif t is ast.If:
            node = n.If(self.expr(s.test), self.suite(s.body), self.orelse_if(s.orelse))
        elif t is ast.For or t is ast.AsyncFor:
            node = n.For(self.expr(s.target), self.expr(s.iter), self.suite(s.body), self.orelse(s.orelse),
                         n.Asynchronous() if t is ast.AsyncFor else None)
        elif t is ast.While:
            node = n.While(self.expr(s.test), self.suite(s.body), self.orelse(s.orelse))
        elif t is ast.Try or t.__name__ == "TryStar":
            star = t.__name__ == "TryStar"
            handler = n.ExceptStarHandler if star else n.ExceptHandler
            handlers = [self.at(handler(self.suite(h.body), self.opt(h.type),
                                        self._handler_name(h)), h) for h in s.handlers]
            final = None
            if s.finalbody:
                body = self.suite(s.finalbody)
                final = self.between(n.Finally(body), body, body)
            node = (n.TryStar if star else n.Try)(self.suite(s.body), handlers, self.orelse(s.orelse), final)
        elif t is ast.With or t is ast.AsyncWith:
            items = []
            for item in s.items:
                expr = self.expr(item.context_expr)
                asname = None
                if item.optional_vars is not None:
                    asname = self.as_name(self.expr(item.optional_vars))
                end = asname or expr
                items.append(self.spanned(n.WithItem(expr, asname), *expr._span[:2], *end._span[2:4]))
            node = n.With(items, self.suite(s.body), n.Asynchronous() if t is ast.AsyncWith else None)
        elif t is ast.Match:
            cases = []
            for case in s.cases:
                body = self.suite(case.body)
                pattern = self.at(n.MatchPattern([]), case.pattern)
                cases.append(self.between(n.MatchCase(pattern, body, self.opt(case.guard)), pattern, body))
            node = n.Match(self.expr(s.subject), cases)
        else:
            node = n.Pass()
        return self.at(node, s)

    def _handler_name(self, h: ast.ExceptHandler) -> n.CSTNode | None:
        if not h.name:
            return None
        start = h.type.end_col_offset if h.type is not None else h.col_offset
        line = h.type.end_lineno if h.type is not None else h.lineno
        name = self.word(h.name, line or h.lineno, self.col(line or h.lineno, start or 0))
        return self.as_name(name)

    def orelse_if(self, orelse: list[ast.stmt]) -> n.CSTNode | None:
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            first = orelse[0]
            if self.lines[first.lineno - 1].startswith("elif", self.col(first.lineno, first.col_offset)):
                return self.compound(first)
        return self.orelse(orelse)

    def orelse(self, orelse: list[ast.stmt]) -> n.CSTNode | None:
        if not orelse:
            return None
        body = self.suite(orelse)
        return self.between(n.Else(body), body, body)

    def decorator(self, d: ast.expr) -> n.CSTNode:
        expr = self.expr(d)
        line, col = expr._span[0], expr._span[1]
        at = self.lines[line - 1].rfind("@", 0, col)
        return self.spanned(n.Decorator(expr), line, at if at >= 0 else col, expr._span[2], expr._span[3])

    def parameters(self, a: ast.arguments, owner: Any) -> n.CSTNode:
        positional = [*a.posonlyargs, *a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        params = [self.param(p, d, "") for p, d in zip(positional, defaults)]
        posonly, plain = params[:len(a.posonlyargs)], params[len(a.posonlyargs):]
        star_arg: n.CSTNode | None = None
        if a.vararg is not None:
            star_arg = self.param(a.vararg, None, "*")
        elif a.kwonlyargs:
            star_arg = n.ParamStar()
            star_arg._span = (owner.lineno, 0, owner.lineno, 0, self.tag)
        kwonly = [self.param(p, d, "") for p, d in zip(a.kwonlyargs, a.kw_defaults)]
        star_kwarg = self.param(a.kwarg, None, "**") if a.kwarg is not None else None
        node = n.Parameters(plain, star_arg, kwonly, star_kwarg, posonly)
        node._span = (owner.lineno, 0, owner.lineno, 0, self.tag)
        return node

    def param(self, p: ast.arg, default: ast.expr | None, star: str) -> n.CSTNode:
        col = self.col(p.lineno, p.col_offset)
        name = self.spanned(n.Name(p.arg), p.lineno, col, p.lineno, col + len(p.arg))
        annotation = self.at(n.Annotation(self.expr(p.annotation)), p.annotation) if p.annotation else None
        node = n.Param(name, annotation, self.opt(default), star)
        # libcst places a parameter at its name, with its stars
        return self.spanned(node, p.lineno, col - len(star), p.lineno, col + len(p.arg))
