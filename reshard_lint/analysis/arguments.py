"""A call's arguments, evaluated once, looked up by position or keyword."""

from __future__ import annotations

import ast
from typing import Optional

from .tree import Arg, arg_star, arg_value
from .values import UNKNOWN, Value


class Call:
    """A call's arguments, evaluated once."""

    def __init__(self, node: ast.Call, args: list[tuple[Optional[str], Value, Arg]]) -> None:
        self.node = node
        # (value, the argument's node: an expression or an ast.keyword; ``arg_value`` reads it)
        self.positional = [(v, a) for k, v, a in args if k is None and not arg_star(a)]
        self.keywords = {k: (v, a) for k, v, a in args if k is not None}
        self.has_star = any(arg_star(a) for _, _, a in args)

    @classmethod
    def of_values(cls, node: ast.AST, values: list[Value]) -> "Call":
        """A call the program makes without spelling it (a tree.map callback on a leaf)."""
        call = cls.__new__(cls)
        call.node = node  # type: ignore[assignment]
        call.positional = [(v, ast.Name("_")) for v in values]
        call.keywords = {}
        call.has_star = False
        return call

    def values(self) -> list[Value]:
        """Every argument's value, positional then keyword."""
        return [v for v, _ in self.positional] + [v for v, _ in self.keywords.values()]

    def arg(self, index: int, name: str | None = None) -> Value:
        if name is not None and name in self.keywords:
            return self.keywords[name][0]
        if index >= 0 and index < len(self.positional):
            return self.positional[index][0]
        return UNKNOWN

    def arg_node(self, index: int, name: str | None = None) -> Optional[ast.expr]:
        if name is not None and name in self.keywords:
            return arg_value(self.keywords[name][1])
        if index >= 0 and index < len(self.positional):
            return arg_value(self.positional[index][1])
        return None

    def given(self, index: int, name: str | None = None) -> bool:
        return self.arg_node(index, name) is not None
