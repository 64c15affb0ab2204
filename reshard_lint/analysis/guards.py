"""The ``if`` statements around a node: is this code pinned to one process or one host?

Asked only for a candidate diagnostic (rare), so it walks the module each time instead
of keeping parent links for every file.
"""

from __future__ import annotations

import re
from ..syntax import nodes as cst

from ..syntax.nodes import iter_children as children

# Tests that pin code to some processes, or to a one-process run.
PROCESS_TEST = re.compile(r"\b(process_index|process_count|host_id|host_count|process_id)\b")
ONE_PROCESS_TEST = re.compile(r"\b(process_count|host_count)\b")
_EXITS = re.compile(r"\b(return|raise|continue|break|exit)\b")


_FRAMES = (cst.FunctionDef, cst.Lambda)
_TESTED = (cst.If, cst.IfExp, cst.While)
# Leaving markers on the walk's stack.
_LEAVE_TEST, _LEAVE_FRAME = object(), object()


def enclosing_tests(module: cst.Module, target: cst.CSTNode) -> list[str]:
    """The source of each ``if``/``elif``/ternary test whose branches hold ``target``, and
    of each ``if`` before it in the same function that leaves it (``if jax.process_index() != 0:
    return``)."""
    code = module.code_for_node
    tests: list[str] = []  # of the statements and expressions around the node being walked
    frames: list[list[str]] = [[]]  # per enclosing function: the leaving tests seen so far
    # A visitor that rebuilt every node's children (libcst's, before syntax/) took 55 ms
    # a call on jax's pjit_test.py slice; this walk reads the fields.
    work: list[object] = [module]
    while work:
        item = work.pop()
        if item is _LEAVE_TEST:
            tests.pop()
            continue
        if item is _LEAVE_FRAME:
            frames.pop()
            continue
        node = item
        if node is target:
            return tests + frames[-1]
        if isinstance(node, _FRAMES):
            frames.append([])
            work.append(_LEAVE_FRAME)
        elif isinstance(node, _TESTED):
            text = code(node.test)  # type: ignore[attr-defined]
            tests.append(text)
            work.append(_LEAVE_TEST)
            if isinstance(node, cst.If) and _EXITS.search(code(node.body)):
                frames[-1].append(text)  # `if ...: return` guards what follows
        kids = _in_source_order(node)
        kids.reverse()
        work.extend(kids)
    return []


def _in_source_order(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's children as the source has them: a definition's fields list its body
    before its decorators, return annotation and bases."""
    kids = list(children(node))
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        first = {id(d) for d in node.decorators}
        body = node.body
        # stable: decorators, then the header in field order, then the body
        kids.sort(key=lambda k: 2 if k is body else id(k) not in first)
    return kids


def pinned(module: cst.Module, target: cst.CSTNode, pattern: re.Pattern[str] = PROCESS_TEST) -> bool:
    """True when a test around ``target`` reads the process index or count."""
    return any(pattern.search(t) for t in enclosing_tests(module, target))
