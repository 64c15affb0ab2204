"""The ``if`` statements around a node: is this code pinned to one process or one host?

Asked only for a candidate diagnostic (rare), so it walks the module each time instead
of keeping parent links for every file.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

# Tests that pin code to some processes, or to a one-process run.
PROCESS_TEST = re.compile(r"\b(process_index|process_count|host_id|host_count|process_id)\b")
ONE_PROCESS_TEST = re.compile(r"\b(process_count|host_count)\b")
_EXITS = re.compile(r"\b(return|raise|continue|break|exit)\b")


def enclosing_tests(module: cst.Module, target: cst.CSTNode) -> list[str]:
    """The source of each ``if``/``elif``/ternary test whose branches hold ``target``, and
    of each ``if`` before it in the same function that leaves it (``if jax.process_index() != 0:
    return``)."""
    found: Optional[list[str]] = None
    stack: list[tuple[cst.CSTNode, str]] = []
    earlier: list[list[str]] = [[]]  # per enclosing function: tests seen so far

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            if found is not None:
                return False
            if node is target:
                found = [text for _, text in stack] + earlier[-1]
                return False
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                earlier.append([])
            if isinstance(node, (cst.If, cst.IfExp, cst.While)):
                text = module.code_for_node(node.test)
                stack.append((node, text))
                if isinstance(node, cst.If) and _EXITS.search(module.code_for_node(node.body)):
                    earlier[-1].append(text)  # `if ...: return` guards what follows
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if isinstance(original_node, (cst.FunctionDef, cst.Lambda)) and found is None:
                earlier.pop()
            # libcst leaves a node it was told not to enter, too: pop only what was pushed.
            if stack and stack[-1][0] is original_node:
                stack.pop()

    module.visit(Finder())
    return found or []


def pinned(module: cst.Module, target: cst.CSTNode, pattern: re.Pattern[str] = PROCESS_TEST) -> bool:
    """True when a test around ``target`` reads the process index or count."""
    return any(pattern.search(t) for t in enclosing_tests(module, target))
