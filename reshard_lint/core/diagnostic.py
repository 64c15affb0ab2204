"""The one diagnostic type every front end (flake8, CLI, editor) renders."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions.

    Lines are 1-based, columns are 0-based counts of characters (code points) in the
    line, the same convention as ``Diagnostic``.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool


@dataclass(frozen=True)
class Related:
    """A place behind a diagnostic, e.g. where one of the two meshes was built."""

    line: int
    col: int
    message: str
    path: str | None = None  # another file of the project (a mesh built in an imported module)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    line: int  # 1-based
    col: int  # 0-based, in characters; flake8 adds 1 when it prints
    message: str  # without the code
    end_line: int = 0
    end_col: int = 0
    fix: Fix | None = None
    related: tuple[Related, ...] = field(default=())

    @property
    def sort_key(self) -> tuple[int, int, str, str]:
        return (self.line, self.col, self.code, self.message)

    def render(self) -> str:
        return f"{self.code} {self.message}"
