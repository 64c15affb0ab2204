"""Human output. The first line of each finding keeps flake8's shape
(``path:line:col: CODE message``, 1-based column) so grep and editors' error matchers
work on both formats; ``text`` adds the source line, a caret and the fix.

A message says what happens, what JAX raises and how to fix it: often 300 characters and
more. On a terminal, ``text`` wraps it (and long notes) to the terminal's width, the
continuation lines indented; written to a pipe or a file it stays one line, as ``concise``,
JSON, SARIF, GitHub annotations and flake8 always keep it, for the tools that read them."""

from __future__ import annotations

import shutil
import textwrap
from typing import Sequence, TextIO

from .finding import Finding, RuleTable, shown_path


def header(f: Finding) -> str:
    d = f.diag
    return f"{f.path}:{d.line}:{d.col + 1}: {d.code} {d.message}"


def concise(findings: Sequence[Finding], rules: RuleTable, out: TextIO) -> None:
    for f in findings:
        out.write(header(f) + "\n")


def _line(f: Finding, lineno: int) -> str | None:
    if 1 <= lineno <= len(f.lines):
        return f.lines[lineno - 1].rstrip("\r\n")
    return None


def _pad(text: str, col: int) -> str:
    """Spaces up to ``col`` that line up under ``text`` (tabs stay tabs)."""
    return "".join(ch if ch == "\t" else " " for ch in text[:col])


def terminal_width(out: TextIO) -> int | None:
    """The width to wrap to when ``out`` is a terminal (``COLUMNS`` wins, as in
    shutil.get_terminal_size; at least 60), else None: no wrapping."""
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or file-less stream
        return None
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _wrap(line: str, width: int | None, indent: str) -> str:
    if width is None or len(line) <= width:
        return line
    # Paths, device lists and code stay whole: break at spaces only.
    return textwrap.fill(line, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def text(findings: Sequence[Finding], rules: RuleTable, out: TextIO) -> None:
    wrap_at = terminal_width(out)
    for i, f in enumerate(findings):
        d = f.diag
        if i:
            out.write("\n")
        out.write(_wrap(header(f), wrap_at, "    ") + "\n")
        src = _line(f, d.line)
        width = len(str(max([d.line] + [r.line for r in d.related if r.path is None])))
        gutter = " " * width
        if src is not None:
            end = d.end_col if d.end_line == d.line and d.end_col > d.col else min(len(src), d.col + 1)
            if d.end_line > d.line:
                end = len(src)  # the span goes on below: underline to the end of this line
            carets = "^" * max(1, min(end, len(src)) - d.col)
            out.write(f"{gutter} |\n{d.line:>{width}} | {src}\n{gutter} | {_pad(src, d.col)}{carets}\n")
        for r in d.related:
            where = f"line {r.line}" if r.path is None else f"{shown_path(r.path)}:{r.line}"
            out.write(_wrap(f"{gutter} = note: {where}: {r.message}", wrap_at, f"{gutter}         ") + "\n")
        if d.fix is not None:
            kind = "safe fix, --fix" if d.fix.safe else "unsafe fix, --unsafe-fixes"
            out.write(_wrap(f"{gutter} = help: {d.fix.title} ({kind})", wrap_at, f"{gutter}         ") + "\n")
