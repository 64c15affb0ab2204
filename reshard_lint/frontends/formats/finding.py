"""What every output format reads: a finding (a diagnostic with its file's lines), the
rule table, and how paths and rule pages are shown."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ... import DOCS_URL
from ...core.diagnostic import Diagnostic, Edit


@dataclass(frozen=True)
class Finding:
    path: str
    diag: Diagnostic
    lines: Sequence[str]  # the file's lines with their endings (for snippets)

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        d = self.diag
        return (self.path, d.line, d.col, d.code, d.message)


def fix_edits(f: Finding) -> tuple[Edit, ...] | None:
    """The edits of the finding's fix on its file, the import it needs included (libcst
    adds it, core/add_imports.py); None when there is no fix or its import cannot be added."""
    fix = f.diag.fix
    if fix is None:
        return None
    from ...core.fixes import edits_of

    return edits_of("".join(f.lines), fix)


RuleTable = Mapping[str, Mapping[str, Any]]  # code -> rule metadata (runner.rule_table)


def shown_path(path: str) -> str:
    """Another file a diagnostic points into, as the user's paths are: relative to the
    working directory when it is below it, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def rule_url(code: str) -> str | None:
    """The rule's published page, or None while the pages are published nowhere."""
    return DOCS_URL.format(code=code) if DOCS_URL else None
