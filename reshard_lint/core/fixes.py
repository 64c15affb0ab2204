"""Applying fixes to source text: non-overlapping edits, never for a finding a noqa silences."""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from . import noqa
from .diagnostic import Diagnostic, Edit, Fix


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
    left for the next round (the caller loops until nothing changes). A fix that needs
    an import gets it as one more edit (``edits_of``), applied with the fix or not at all.

    A diagnostic that a ``# noqa`` silences (a bare one, or one naming its code: the
    reports' own rule, ``noqa.split``) is not fixed; one that stays reported is, whatever
    other codes its line's noqa names (``# noqa: E501``), as ruff does: the fixes applied
    are those of the findings reported.
    """
    lines = split_lines(source)
    starts = line_starts(lines)
    given = list(diagnostics)
    silenced_ids = {id(d) for d in noqa.split(given, lines)[1]}
    chosen: list[tuple[int, int, str]] = []
    applied: list[Diagnostic] = []
    taken: list[tuple[int, int]] = []
    for d in sorted(given, key=lambda d: d.sort_key):
        fix = d.fix
        if fix is None or (not fix.safe and not unsafe) or id(d) in silenced_ids:
            continue
        edits = edits_of(source, fix)
        if edits is None:
            continue
        spans = [_span(e, starts, lines) for e in edits]
        if any(s is None for s in spans):
            continue
        # (spans holds no None from here: above)
        if _overlap(spans):  # type: ignore[arg-type]
            continue  # a fix's own edits (the text and its import) must apply together
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


def edits_of(source: str, fix: Fix) -> tuple[Edit, ...] | None:
    """The edits of ``fix`` on ``source``, with those that add the imports it needs
    (made by libcst, imported only then); None when the imports cannot be added."""
    if not fix.imports:
        return fix.edits
    from .add_imports import with_imports

    new = with_imports(source, fix.imports)
    return None if new is None else fix.edits + line_edits(source, new)


def line_edits(old: str, new: str) -> tuple[Edit, ...]:
    """The edits that turn ``old`` into ``new``, whole lines replaced or inserted: an
    import edit never touches the part of a line the fix's own edit changes."""
    import difflib

    a, b = split_lines(old), split_lines(new)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(Edit(i1 + 1, 0, i2 + 1, 0, "".join(b[j1:j2])))
    return tuple(out)


def _overlap(spans: Sequence[tuple[int, int, str]]) -> bool:
    ordered = sorted(spans)
    return any(b1 > a2 or (a1 == b1 == a2) for (a1, b1, _), (a2, _b2, _t) in zip(ordered, ordered[1:]))


def _span(e: Edit, starts: list[int], lines: Sequence[str]) -> tuple[int, int, str] | None:
    if not (1 <= e.line <= len(lines) + 1 and 1 <= e.end_line <= len(lines) + 1):
        return None
    a = starts[e.line - 1] + e.col
    b = starts[e.end_line - 1] + e.end_col
    if a > b:
        return None
    return a, b, e.replacement
