"""A call's arguments, evaluated once, looked up by position or keyword."""

from __future__ import annotations

from typing import Optional

from ..syntax import nodes as cst

from .values import UNKNOWN, Value


class Call:
    """A call's arguments, evaluated once."""

    def __init__(self, node: cst.Call, args: list[tuple[Optional[str], Value, cst.Arg]]) -> None:
        self.node = node
        self.positional = [(v, a) for k, v, a in args if k is None and a.star == ""]
        self.keywords = {k: (v, a) for k, v, a in args if k is not None}
        self.has_star = any(a.star for _, _, a in args)

    @classmethod
    def of_values(cls, node: cst.CSTNode, values: list[Value]) -> "Call":
        """A call the program makes without spelling it (a tree.map callback on a leaf)."""
        call = cls.__new__(cls)
        call.node = node  # type: ignore[assignment]
        call.positional = [(v, cst.Arg(cst.Name("_"))) for v in values]
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

    def arg_node(self, index: int, name: str | None = None) -> Optional[cst.BaseExpression]:
        if name is not None and name in self.keywords:
            return self.keywords[name][1].value
        if index >= 0 and index < len(self.positional):
            return self.positional[index][1].value
        return None

    def given(self, index: int, name: str | None = None) -> bool:
        return self.arg_node(index, name) is not None
