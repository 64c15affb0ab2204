"""Human output. The first line of each finding keeps flake8's shape
(``path:line:col: CODE message``, 1-based column) so grep and editors' error matchers
work on both formats; ``text`` adds the source line, a caret and the fix."""

from __future__ import annotations

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


def text(findings: Sequence[Finding], rules: RuleTable, out: TextIO) -> None:
    for i, f in enumerate(findings):
        d = f.diag
        if i:
            out.write("\n")
        out.write(header(f) + "\n")
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
            out.write(f"{gutter} = note: {where}: {r.message}\n")
        if d.fix is not None:
            kind = "safe fix, --fix" if d.fix.safe else "unsafe fix, --unsafe-fixes"
            out.write(f"{gutter} = help: {d.fix.title} ({kind})\n")
