"""Output formats of ``reshard-lint check``: text, concise, json, sarif, github.

Each formatter takes the findings already filtered and sorted (path, line, column,
code) and writes to a stream; docs/output-formats.md documents the shapes, which are
stable: tools parse them.
"""

from __future__ import annotations

from typing import Callable, Sequence, TextIO

from .finding import Finding, RuleTable

FORMATS = ("text", "concise", "json", "sarif", "github")


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
