"""The syntax tree the analysis reads (nodes.py), built from Python's own (build.py)."""

from __future__ import annotations

from .nodes import Module


def parse_text(text: str) -> Module:
    """The tree of ``text``; raises SyntaxError (and ValueError for a NUL byte) as
    Python's parser does."""
    from .. import newer_syntax
    from .build import build

    return build(newer_syntax.parse(text), text)
