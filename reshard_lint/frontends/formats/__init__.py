"""Output formats of ``reshard-lint check``: text, concise, json, sarif, github.

Each formatter takes the findings already filtered and sorted (path, line, column,
code) and writes to a stream; docs/output-formats.md documents the shapes, which are
stable: tools parse them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, TextIO

from ..diagnostic import Diagnostic

FORMATS = ("text", "concise", "json", "sarif", "github")
# Where a rule's page is published. The pages live in docs/rules/ of the repository;
# change this one constant when the project's documentation moves.
from .. import DOCS_URL  # noqa: E402,F401 - one place for the rule pages' address


@dataclass(frozen=True)
class Finding:
    path: str
    diag: Diagnostic
    lines: Sequence[str]  # the file's lines with their endings (for snippets)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        d = self.diag
        return (self.path, d.line, d.col, d.code, d.message)


RuleTable = Mapping[str, Mapping[str, Any]]  # code -> rule metadata (runner.rule_table)


def shown_path(path: str) -> str:
    """Another file a diagnostic points into, as the user's paths are: relative to the
    working directory when it is below it, else absolute."""
    import os

    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def rule_url(code: str) -> str:
    return DOCS_URL.format(code=code)


def formatter(name: str) -> Callable[[Sequence[Finding], RuleTable, TextIO], None]:
    if name in ("text", "concise"):
        from .text import concise, text

        return text if name == "text" else concise
    if name == "json":
        from .json_ import render
        return render
    if name == "sarif":
        from .sarif import render
        return render
    if name == "github":
        from .github import render
        return render
    raise ValueError(name)
