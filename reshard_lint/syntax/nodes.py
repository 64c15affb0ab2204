"""The syntax tree the analysis reads: libcst's node types and field names, without its parser.

The analysis was written against libcst's tree, whose shape (a call's arguments in
source order, ``elif`` as an ``If`` in ``orelse``, one ``SimpleStatementLine`` per
physical line of small statements ...) it relies on. libcst's parser builds every
whitespace token as a node too: on the jax repository's sliced files 1.63 s where
Python's ``ast.parse`` and the conversion here take 0.30 s, and importing libcst costs
each flake8 process 0.10 s (docs/performance.md, eighteenth stop). So the tree is built
from Python's (build.py) into these classes: the same names and fields, no whitespace,
and each node's position (line, column, end line, end column: columns in characters, as
libcst's ``PositionProvider`` gives them) taken from Python's tree.

Nodes compare and hash by identity, as libcst's do: the analysis keys tables by node.
"""

from __future__ import annotations

from typing import Any, Iterator

from .text import segment


class CSTNode:
    __slots__ = ("_span",)
    _fields: tuple[str, ...] = ()

    def __init__(self, *args: Any) -> None:  # replaced per class below
        raise TypeError("abstract node")

    @property
    def children(self) -> list["CSTNode"]:
        return list(iter_children(self))

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"


def iter_children(node: CSTNode) -> Iterator[CSTNode]:
    """The child nodes, in field order."""
    for name in node._fields:
        value = getattr(node, name)
        if isinstance(value, CSTNode):
            yield value
        elif type(value) is list or type(value) is tuple:
            for item in value:
                if isinstance(item, CSTNode):
                    yield item


# Abstract classes the analysis tests against (libcst's names).
class BaseExpression(CSTNode):
    __slots__ = ()


class BaseAssignTargetExpression(BaseExpression):
    __slots__ = ()


class BaseDelTargetExpression(BaseExpression):
    __slots__ = ()


class BaseStatement(CSTNode):
    __slots__ = ()


class BaseCompoundStatement(BaseStatement):
    __slots__ = ()


class BaseSmallStatement(CSTNode):
    __slots__ = ()


class BaseSuite(CSTNode):
    __slots__ = ()


class BaseString(BaseExpression):
    __slots__ = ()


class BaseNumber(BaseExpression):
    __slots__ = ()


class BaseElement(CSTNode):
    __slots__ = ()


class BaseDictElement(CSTNode):
    __slots__ = ()


class BaseSlice(CSTNode):
    __slots__ = ()


class BaseComp(BaseExpression):
    __slots__ = ()


class BaseSimpleComp(BaseComp):
    __slots__ = ()


class BaseList(BaseExpression):
    __slots__ = ()


class BaseSet(BaseExpression):
    __slots__ = ()


class BaseDict(BaseExpression):
    __slots__ = ()


class BaseOperator(CSTNode):
    __slots__ = ()


class BaseBinaryOp(BaseOperator):
    __slots__ = ()


class BaseAugOp(BaseOperator):
    __slots__ = ()


class BaseUnaryOp(BaseOperator):
    __slots__ = ()


class BaseBooleanOp(BaseOperator):
    __slots__ = ()


class BaseCompOp(BaseOperator):
    __slots__ = ()


class BaseFormattedStringContent(CSTNode):
    __slots__ = ()


class BaseParenthesizableWhitespace(CSTNode):  # never built: whitespace is not kept
    __slots__ = ()


class TrailingWhitespace(CSTNode):
    __slots__ = ()


class EmptyLine(CSTNode):
    __slots__ = ()


class Newline(CSTNode):
    __slots__ = ()


class Comment(CSTNode):
    __slots__ = ()


def _define(name: str, base: type, fields: str) -> type:
    names = tuple(fields.split())
    params = "".join(f", {f}=None" for f in names)
    body = "".join(f"\n    self.{f} = {f}" for f in names) or "\n    pass"
    scope: dict[str, Any] = {}
    exec(f"def __init__(self{params}):{body}", scope)  # noqa: S102 - fixed text built here
    return type(name, (base,), {"__slots__": names, "_fields": names, "__init__": scope["__init__"],
                                "__module__": __name__})


_SPEC = {
    # statements and their parts
    "SimpleStatementLine": (BaseStatement, "body"),
    "SimpleStatementSuite": (BaseSuite, "body"),
    "IndentedBlock": (BaseSuite, "body"),
    "Expr": (BaseSmallStatement, "value"),
    "Assign": (BaseSmallStatement, "targets value"),
    "AssignTarget": (CSTNode, "target"),
    "AnnAssign": (BaseSmallStatement, "target annotation value"),
    "Annotation": (CSTNode, "annotation"),
    "AugAssign": (BaseSmallStatement, "target operator value"),
    "Return": (BaseSmallStatement, "value"),
    "Pass": (BaseSmallStatement, ""),
    "Break": (BaseSmallStatement, ""),
    "Continue": (BaseSmallStatement, ""),
    "Raise": (BaseSmallStatement, "exc cause"),
    "From": (CSTNode, "item"),
    "Assert": (BaseSmallStatement, "test msg"),
    "Del": (BaseSmallStatement, "target"),
    "Global": (BaseSmallStatement, "names"),
    "Nonlocal": (BaseSmallStatement, "names"),
    "NameItem": (CSTNode, "name"),
    "Import": (BaseSmallStatement, "names"),
    "ImportFrom": (BaseSmallStatement, "module names relative"),
    "ImportAlias": (CSTNode, "name asname"),
    "AsName": (CSTNode, "name"),
    "ImportStar": (CSTNode, ""),
    "Dot": (CSTNode, ""),
    "TypeAlias": (BaseSmallStatement, "name value"),
    "FunctionDef": (BaseCompoundStatement, "name params body decorators returns asynchronous"),
    "Asynchronous": (CSTNode, ""),
    "Decorator": (CSTNode, "decorator"),
    "ClassDef": (BaseCompoundStatement, "name body bases keywords decorators"),
    "If": (BaseCompoundStatement, "test body orelse"),
    "Else": (CSTNode, "body"),
    "For": (BaseCompoundStatement, "target iter body orelse asynchronous"),
    "While": (BaseCompoundStatement, "test body orelse"),
    "Try": (BaseCompoundStatement, "body handlers orelse finalbody"),
    "TryStar": (BaseCompoundStatement, "body handlers orelse finalbody"),
    "ExceptHandler": (CSTNode, "body type name"),
    "ExceptStarHandler": (CSTNode, "body type name"),
    "Finally": (CSTNode, "body"),
    "With": (BaseCompoundStatement, "items body asynchronous"),
    "WithItem": (CSTNode, "item asname"),
    "Match": (BaseCompoundStatement, "subject cases"),
    "MatchCase": (CSTNode, "pattern body guard"),
    "MatchPattern": (CSTNode, "names"),  # a case's pattern: only the names it binds
    "Parameters": (CSTNode, "params star_arg kwonly_params star_kwarg posonly_params"),
    "Param": (CSTNode, "name annotation default star"),
    "ParamStar": (CSTNode, ""),
    # expressions
    "Name": (BaseAssignTargetExpression, "value"),
    "Attribute": (BaseAssignTargetExpression, "value attr"),
    "Call": (BaseExpression, "func args"),
    "Arg": (CSTNode, "value keyword star"),
    "Subscript": (BaseAssignTargetExpression, "value slice"),
    "SubscriptElement": (CSTNode, "slice"),
    "Index": (BaseSlice, "value star"),
    "Slice": (BaseSlice, "lower upper step"),
    "Tuple": (BaseAssignTargetExpression, "elements"),
    "List": (BaseList, "elements"),
    "Set": (BaseSet, "elements"),
    "Element": (BaseElement, "value"),
    "StarredElement": (BaseElement, "value"),
    "Dict": (BaseDict, "elements"),
    "DictElement": (BaseDictElement, "key value"),
    "StarredDictElement": (BaseDictElement, "value"),
    "Integer": (BaseNumber, "value evaluated_value"),
    "Float": (BaseNumber, "value evaluated_value"),
    "Imaginary": (BaseNumber, "value evaluated_value"),
    "SimpleString": (BaseString, "value evaluated_value"),
    "ConcatenatedString": (BaseString, "left right evaluated_value"),
    "FormattedString": (BaseString, "parts"),
    "FormattedStringText": (BaseFormattedStringContent, "value"),
    "FormattedStringExpression": (BaseFormattedStringContent, "expression conversion format_spec"),
    "Ellipsis": (BaseExpression, ""),
    "BinaryOperation": (BaseExpression, "left operator right"),
    "UnaryOperation": (BaseExpression, "operator expression"),
    "BooleanOperation": (BaseExpression, "left operator right"),
    "Comparison": (BaseExpression, "left comparisons"),
    "ComparisonTarget": (CSTNode, "operator comparator"),
    "IfExp": (BaseExpression, "test body orelse"),
    "Lambda": (BaseExpression, "params body"),
    "NamedExpr": (BaseExpression, "target value"),
    "Await": (BaseExpression, "expression"),
    "Yield": (BaseExpression, "value"),
    "GeneratorExp": (BaseSimpleComp, "elt for_in"),
    "ListComp": (BaseSimpleComp, "elt for_in"),
    "SetComp": (BaseSimpleComp, "elt for_in"),
    "DictComp": (BaseComp, "key value for_in"),
    "CompFor": (CSTNode, "target iter ifs inner_for_in asynchronous"),
    "CompIf": (CSTNode, "test"),
    # An expression of a newer Python than the builder knows (a template string of 3.14):
    # the expressions inside it, so that the names it reads are read; its value is unknown.
    "OtherExpression": (BaseExpression, "parts"),
}
_OPERATORS = {
    BaseBinaryOp: "Add Subtract Multiply Divide FloorDivide Modulo Power MatrixMultiply LeftShift "
                  "RightShift BitOr BitAnd BitXor",
    BaseAugOp: "AddAssign SubtractAssign MultiplyAssign DivideAssign FloorDivideAssign ModuloAssign "
               "PowerAssign MatrixMultiplyAssign LeftShiftAssign RightShiftAssign BitOrAssign "
               "BitAndAssign BitXorAssign",
    BaseUnaryOp: "Minus Plus Not BitInvert",
    BaseBooleanOp: "And Or",
    BaseCompOp: "Equal NotEqual LessThan LessThanEqual GreaterThan GreaterThanEqual In NotIn Is IsNot",
}

_namespace = globals()
for _name, (_base, _fields) in _SPEC.items():
    _namespace[_name] = _define(_name, _base, _fields)
for _base, _names in _OPERATORS.items():
    for _name in _names.split():
        _namespace[_name] = _define(_name, _base, "")
del _namespace, _name, _base, _fields, _names


class Source:
    """What every node of one module points to (the last item of its ``_span``): the
    module's lines, and the spans with their own parentheses of the expressions that
    have them, which libcst counts into a node's code (``code_for_node``)."""

    __slots__ = ("lines", "outer")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        # Keyed by id, not by node: a node already points here, and a reference back
        # would make every tree a cycle for the collector. The ids stay unique while
        # this exists: it lives as long as any node of its module, none added later.
        self.outer: dict[int, tuple[int, int, int, int]] = {}


class Module(CSTNode):  # type: ignore[no-redef]
    """The tree's root: its statements, and the text they were built from."""

    __slots__ = ("body", "code", "lines", "tag")
    _fields = ("body",)

    def __init__(self, body: list[CSTNode], code: str = "", lines: list[str] | None = None,
                 tag: Source | None = None) -> None:
        self.body = body
        self.code = code
        self.lines = lines or []
        self.tag = tag

    def code_for_node(self, node: CSTNode) -> str:
        """The text of ``node`` with its own parentheses, as libcst generates it (read
        back from the text of the node's own module)."""
        source: Source = node._span[4]
        return segment(source.lines, *(source.outer.get(id(node)) or node._span[:4]))
