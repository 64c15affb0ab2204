"""Applying fixes to source text: non-overlapping edits, never on a noqa line."""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from . import noqa
from .diagnostic import Diagnostic, Edit


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(source: str) -> list[str]:
    """Lines with their endings, split only where Python ends a line.

    str.splitlines also splits at form feeds and other separators, which would shift
    every position after them.
    """
    return _LINE.findall(source)


def line_starts(lines: Sequence[str]) -> list[int]:
    """Where each line starts in the text, in characters, and where the text ends."""
    out = [0]
    for text in lines:
        out.append(out[-1] + len(text))
    return out


def apply(source: str, diagnostics: Iterable[Diagnostic], *,
          unsafe: bool = False) -> tuple[str, list[Diagnostic]]:
    """Apply the fixes of ``diagnostics`` that may be applied; returns (new source, applied).

    Edits are in (line, character column) positions of ``source``; overlapping fixes are
    left for the next round (the caller loops until nothing changes).
    """
    lines = split_lines(source)
    starts = line_starts(lines)
    silenced_lines = set(noqa.parse(lines))
    chosen: list[tuple[int, int, str]] = []
    applied: list[Diagnostic] = []
    taken: list[tuple[int, int]] = []
    for d in sorted(diagnostics, key=lambda d: d.sort_key):
        fix = d.fix
        if fix is None or (not fix.safe and not unsafe) or d.line in silenced_lines:
            continue
        spans = [_span(e, starts, lines) for e in fix.edits]
        if any(s is None for s in spans):
            continue
        if any(e.line in silenced_lines or e.end_line in silenced_lines for e in fix.edits):
            continue
        if any(a < tb and ta < b or a == b == ta  # type: ignore[misc]
               for a, b, _ in spans for ta, tb in taken):
            continue
        for (a, b, text) in spans:  # type: ignore[misc]
            chosen.append((a, b, text))
            taken.append((a, b))
        applied.append(d)
    out = source
    for a, b, text in sorted(chosen, reverse=True):
        out = out[:a] + text + out[b:]
    return out, applied


def _span(e: Edit, starts: list[int], lines: Sequence[str]) -> tuple[int, int, str] | None:
    if not (1 <= e.line <= len(lines) + 1 and 1 <= e.end_line <= len(lines) + 1):
        return None
    a = starts[e.line - 1] + e.col
    b = starts[e.end_line - 1] + e.end_col
    if a > b:
        return None
    return a, b, e.replacement
