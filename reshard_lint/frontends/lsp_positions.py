"""Positions and diagnostics in the protocol's terms, for the language server: the engine
counts columns in code points, LSP in the encoding the client negotiated (UTF-16 code
units unless it offered another)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Sequence

from lsprotocol import types

from .. import DOCS_URL
from ..core.diagnostic import Diagnostic, Edit
from ..rules import rule_by_code


def enum_value(kind: object) -> str:
    # lsprotocol's enums are str subclasses whose str() is "Class.Member", not the value.
    return str(kind.value) if isinstance(kind, enum.Enum) else str(kind)


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf32.value:
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8.value:
        return len(text.encode("utf-8", "surrogatepass"))
    # Characters outside the BMP take two UTF-16 code units.
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def line_body(line: str) -> str:
    return line.rstrip("\r\n")


class Positions:
    """Converts (1-based line, code-point column) to LSP positions for one text."""

    def __init__(self, lines: Sequence[str], encoding: str) -> None:
        self.lines = lines
        self.encoding = encoding

    def position(self, line: int, col: int) -> types.Position:
        if line < 1:
            return types.Position(line=0, character=0)
        if line > len(self.lines):
            # Past the last line (an edit that appends at the very end of the text).
            return types.Position(line=max(line - 1, 0), character=0)
        text = line_body(self.lines[line - 1])
        col = max(0, min(col, len(text)))
        return types.Position(line=line - 1, character=_units(text[:col], self.encoding))

    def line_end(self, line: int) -> types.Position:
        if not 1 <= line <= len(self.lines):
            return self.position(line, 0)
        return self.position(line, len(line_body(self.lines[line - 1]).rstrip()))

    def range(self, line: int, col: int, end_line: int, end_col: int) -> types.Range:
        start = self.position(line, col)
        if end_line <= 0 or (end_line, end_col) < (line, col):
            end = self.line_end(line)
            if (end.line, end.character) < (start.line, start.character):
                end = start
        else:
            end = self.position(end_line, end_col)
        return types.Range(start=start, end=end)

    def edit(self, e: Edit) -> types.TextEdit:
        return types.TextEdit(range=types.Range(start=self.position(e.line, e.col),
                                                end=self.position(e.end_line, e.end_col)),
                              new_text=e.replacement)


def elsewhere(path: str, line: int, col: int) -> types.Location:
    """A place in another file of the project (where an imported mesh is built); its
    column counts characters, which is UTF-16 units for the ASCII such lines hold."""
    at = types.Position(line=max(line - 1, 0), character=col)
    return types.Location(uri=Path(path).resolve().as_uri(), range=types.Range(start=at, end=at))


# The clone's rule pages (docs/rules/CODE.md beside the package: a clone, or an editable
# install of one); a package installed from the clone has no docs/ and links nothing.
CLONE_DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules"


SOURCE = "reshard-lint"


def docs_url(code: str) -> str | None:
    """A page of the rule that exists: the published one, else the clone's file, else None
    (the diagnostic then has no link; ``reshard-lint rule CODE`` prints the page)."""
    if DOCS_URL:
        return DOCS_URL.format(code=code)
    page = CLONE_DOCS / f"{code}.md"
    return page.as_uri() if page.is_file() else None


def to_lsp(d: Diagnostic, uri: str, pos: Positions) -> types.Diagnostic:
    rule = rule_by_code(d.code)
    severity = types.DiagnosticSeverity.Warning if rule is not None and rule.severity == "warning" \
        else types.DiagnosticSeverity.Error
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=pos.range(r.line, r.col, 0, 0)) if r.path is None
            else elsewhere(r.path, r.line, r.col), message=r.message)
        for r in d.related
    ]
    href = docs_url(d.code) if rule is not None else None
    return types.Diagnostic(
        range=pos.range(d.line, d.col, d.end_line, d.end_col),
        message=d.message,
        severity=severity,
        code=d.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related or None,
    )
