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
        self.starred = [v for _, v, a in args if arg_star(a)]  # the values of *args and **kwargs
        # Arguments this call does not spell (a partial's, or values the program passes
        # unseen): ``arg_node`` gives no node for them, so that no message quotes and no
        # fix rewrites code that is not this call's.
        self.unspelled: frozenset[int | str] = frozenset()

    @classmethod
    def of_values(cls, node: ast.AST, values: list[Value]) -> "Call":
        """A call the program makes without spelling it (a tree.map callback on a leaf)."""
        call = cls.__new__(cls)
        call.node = node  # type: ignore[assignment]
        call.positional = [(v, ast.Name("_")) for v in values]
        call.keywords = {}
        call.has_star = False
        call.starred = []
        call.unspelled = frozenset(range(len(values)))
        return call

    def after(self, held: "Call", skip: int, kwargs: dict[str, Value]) -> "Call":
        """This call of ``functools.partial(f, *a, **k)``: the partial's own call ``held``
        (its first ``skip`` positional arguments are ``f``), its keywords' values
        ``kwargs``, then this call's arguments (a keyword given here replaces the
        partial's). The partial's arguments keep their nodes (another statement's, maybe
        another module's) but are unspelled here."""
        call = Call.__new__(Call)
        call.node = self.node
        bound = held.positional[skip:]
        call.positional = [*bound, *self.positional]
        kept = {k: (v, held.keywords[k][1]) for k, v in kwargs.items() if k not in self.keywords}
        call.keywords = {**kept, **self.keywords}
        call.has_star = self.has_star or held.has_star
        call.starred = [*held.starred, *self.starred]
        call.unspelled = frozenset([*range(len(bound)), *kept,
                                    *(i + len(bound) for i in self.unspelled if isinstance(i, int)),
                                    *(k for k in self.unspelled if isinstance(k, str))])
        return call

    def handed(self) -> list[Value]:
        """Every value the call hands over, the ``*args`` and ``**kwargs`` it unpacks too."""
        return [*self.values(), *self.starred]

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
        """The expression this call spells for the argument; None for one it does not
        pass, or does not spell (``unspelled``)."""
        if name is not None and name in self.keywords:
            return None if name in self.unspelled else arg_value(self.keywords[name][1])
        if index >= 0 and index < len(self.positional):
            return None if index in self.unspelled else arg_value(self.positional[index][1])
        return None

    def given(self, index: int, name: str | None = None) -> bool:
        """The call passes the argument (spelled here or not)."""
        if name is not None and name in self.keywords:
            return True
        return 0 <= index < len(self.positional)
