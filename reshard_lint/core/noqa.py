"""``# noqa`` as flake8 understands it, for the front ends that are not flake8."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Sequence

from .diagnostic import Diagnostic

# Same shape as flake8's: `# noqa`, `# noqa: A1,B2`, `# NOQA:A1 B2`.
NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


@dataclass(frozen=True)
class NoqaComment:
    line: int
    codes: frozenset[str] | None  # None: every code


def parse(lines: Sequence[str]) -> dict[int, NoqaComment]:
    out: dict[int, NoqaComment] = {}
    for i, text in enumerate(lines, start=1):
        if "noqa" not in text.lower() or "#" not in text:
            continue
        m = NOQA.search(text)
        if m is None:
            continue
        codes = m.group("codes")
        out[i] = NoqaComment(i, frozenset(c.upper() for c in _CODE.findall(codes)) if codes else None)
    return out


def split(diagnostics: Iterable[Diagnostic],
          lines: Sequence[str]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(kept, silenced by noqa)."""
    comments = parse(lines)
    kept: list[Diagnostic] = []
    silenced: list[Diagnostic] = []
    for d in diagnostics:
        c = comments.get(d.line)
        if c is not None and (c.codes is None or any(d.code.startswith(x) for x in c.codes)):
            silenced.append(d)
        else:
            kept.append(d)
    return kept, silenced


def selected(diagnostics: Iterable[Diagnostic], lines: Sequence[str], select: Callable[[str], bool],
             whole_file: Collection[str] = ()) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """The last stage of engine.check_source: (kept, silenced by noqa) of the diagnostics
    ``select`` selects by code. A code of ``whole_file`` (a parse or internal error: about
    the whole file) is never silenced: a noqa on line 1 must not hide it."""
    diags = [d for d in diagnostics if select(d.code)]
    if not diags:
        return [], []
    kept, silenced = split(diags, lines)
    for d in list(silenced):
        if d.code in whole_file:
            silenced.remove(d)
            kept.append(d)
    return kept, silenced


def unknown_codes(lines: Sequence[str], known: Iterable[str]) -> list[tuple[int, str]]:
    """RSH codes named in noqa comments that no rule has (typos hide nothing silently)."""
    known_set = set(known)
    out = []
    for c in parse(lines).values():
        for code in sorted(c.codes or ()):
            if code.startswith("RSH") and code not in known_set and not any(
                    k.startswith(code) for k in known_set):
                out.append((c.line, code))
    return out
