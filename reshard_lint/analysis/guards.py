"""The ``if`` statements around a node: is this code pinned to one process or one host?

Asked only for a candidate diagnostic (rare), so it walks the module each time instead
of keeping parent links for every file.
"""

from __future__ import annotations

import ast
import re
from typing import Sequence, cast

from .tree import Module

# Tests that pin code to some processes, or to a one-process run.
PROCESS_TEST = re.compile(r"\b(process_index|process_count|host_id|host_count|process_id)\b")
ONE_PROCESS_TEST = re.compile(r"\b(process_count|host_count)\b")
_EXITS = re.compile(r"\b(return|raise|continue|break|exit)\b")


_FRAMES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_TESTED = (ast.If, ast.IfExp, ast.While)
# Leaving markers on the walk's stack.
_LEAVE_TEST, _LEAVE_FRAME = object(), object()


def enclosing_tests(module: Module, target: ast.AST) -> list[str]:
    """The source of each ``if``/``elif``/ternary test whose branches hold ``target``, and
    of each ``if`` before it in the same function that leaves it (``if jax.process_index() != 0:
    return``)."""
    code = module.code_for_node
    tests: list[str] = []  # of the statements and expressions around the node being walked
    frames: list[list[str]] = [[]]  # per enclosing function: the leaving tests seen so far
    # An explicit stack, not a visitor: a visitor that rebuilt every node's children
    # took 55 ms a call on jax's pjit_test.py slice.
    work: list[object] = [module.tree]
    while work:
        item = work.pop()
        if item is _LEAVE_TEST:
            tests.pop()
            continue
        if item is _LEAVE_FRAME:
            frames.pop()
            continue
        node = cast(ast.AST, item)  # the rest of the stack: nodes
        if node is target:
            return tests + frames[-1]
        if isinstance(node, _FRAMES):
            frames.append([])
            work.append(_LEAVE_FRAME)
        elif isinstance(node, _TESTED):
            text = code(node.test)
            tests.append(text)
            work.append(_LEAVE_TEST)
            if type(node) is ast.If and _EXITS.search(_block_code(module, node.body)):
                frames[-1].append(text)  # `if ...: return` guards what follows
        kids = _in_source_order(node)
        kids.reverse()
        work.extend(kids)
    return []


def _in_source_order(node: ast.AST) -> list[ast.AST]:
    """The node's children as the source has them: a definition's fields list its body
    before its decorators, return annotation and bases."""
    kids = list(ast.iter_child_nodes(node))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        first = {id(d) for d in node.decorator_list}
        body = {id(s) for s in node.body}
        # stable: decorators, then the header in field order, then the body
        kids.sort(key=lambda k: 2 if id(k) in body else id(k) not in first)
    return kids


def _block_code(module: Module, body: Sequence[ast.stmt]) -> str:
    """The text of a block, from its first statement to the end of its last."""
    first, last = module.span(body[0]), module.span(body[-1])
    return module.text.segment(first[0], first[1], last[2], last[3])


def pinned(module: Module, target: ast.AST, pattern: re.Pattern[str] = PROCESS_TEST, depth: int = 3) -> bool:
    """True when a test around ``target`` reads the process index or count, or ``target``
    is in a function whose every use in the module is a call so pinned (``if
    jax.process_index() == 0: report(x)``), up to ``depth`` calls out. Calls from other
    modules are not asked: there the code may run unguarded, and a finding missed is
    the safe side."""
    # Every test is a piece of the module's text: where the text never matches, none does
    # (and the walk, one per call, is skipped).
    if pattern.search(module.code) is None:
        return False
    if any(pattern.search(t) for t in enclosing_tests(module, target)):
        return True
    if depth <= 0:
        return False
    name = _function_of(module.tree, target)
    if name is None:
        return False
    uses = [n for n in ast.walk(module.tree) if isinstance(n, ast.Name) and n.id == name]
    calls = {id(c.func): c for c in ast.walk(module.tree) if isinstance(c, ast.Call)}
    return bool(uses) and all(id(u) in calls and pinned(module, calls[id(u)], pattern, depth - 1) for u in uses)


def _function_of(tree: ast.Module, target: ast.AST) -> str | None:
    """The name of the innermost named function whose body holds ``target``."""
    work: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while work:
        node, name = work.pop()
        if node is target:
            return name
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
        work.extend((k, name) for k in ast.iter_child_nodes(node))
    return None
