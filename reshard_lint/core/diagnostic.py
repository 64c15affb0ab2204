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
class Import:
    """A name a fix's text uses that the file does not import yet.

    ``Import("jax.sharding", "Mesh")`` is ``from jax.sharding import Mesh``;
    ``Import("numpy", alias="np")`` is ``import numpy as np``.
    """

    module: str
    name: str | None = None
    alias: str | None = None

    @property
    def local(self) -> str:
        """The name the import binds in the file."""
        return self.alias or self.name or self.module.split(".")[0]


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool
    # Imports the edits need: libcst adds them (core/add_imports.py) when the fix is
    # applied or shown with its edits (core/fixes.edits_of), never while analysing.
    imports: tuple[Import, ...] = ()


@dataclass(frozen=True)
class Related:
    """A place behind a diagnostic, e.g. where one of the two meshes was built."""

    line: int
    col: int
    message: str
    path: str | None = None  # another file of the project (a mesh built in an imported module)
    # A step of the calls from the diagnostic's place to the code that acts (the transfer
    # a helper of another module runs): SARIF's codeFlows list these in order.
    step: bool = False


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
