"""``--format json``: a list of findings, schema in docs/output-formats.md.

Rows and columns are 1-based; a column counts characters (code points); an end
column is exclusive (the column just after the last character), as ruff's JSON.
"""

from __future__ import annotations

import json
from typing import Any, Sequence, TextIO

from ...core.diagnostic import Diagnostic
from .finding import Finding, RuleTable, fix_edits, rule_url, shown_path


# Codes that are not rules (no page): a file that could not be parsed, analysed, read.
BUILTIN_NAMES = {"RSH001": "parse-error", "RSH002": "internal-error", "RSH003": "io-error"}


def _loc(line: int, col: int) -> dict[str, int]:
    return {"row": line, "column": col + 1}


def finding_dict(f: Finding, rules: RuleTable) -> dict[str, Any]:
    d: Diagnostic = f.diag
    meta = rules.get(d.code, {})
    fix = None
    edits = fix_edits(f)
    if d.fix is not None and edits is not None:
        fix = {
            "applicability": "safe" if d.fix.safe else "unsafe",
            "message": d.fix.title,
            "edits": [{"location": _loc(e.line, e.col), "end_location": _loc(e.end_line, e.end_col),
                       "content": e.replacement} for e in edits],
        }
    return {
        "code": d.code,
        "name": meta.get("name", BUILTIN_NAMES.get(d.code, "")),
        "message": d.message,
        "filename": f.path,
        "location": _loc(d.line, d.col),
        "end_location": _loc(d.end_line, d.end_col) if d.end_line else _loc(d.line, d.col),
        "severity": meta.get("severity", "error"),
        "fix": fix,
        "related": [{"location": _loc(r.line, r.col), "message": r.message,
                     **({"filename": shown_path(r.path)} if r.path is not None else {})} for r in d.related],
        "url": rule_url(d.code) if d.code in rules and d.code not in BUILTIN_NAMES else None,
    }


def render(findings: Sequence[Finding], rules: RuleTable, out: TextIO) -> None:
    json.dump([finding_dict(f, rules) for f in findings], out, indent=2, ensure_ascii=False)
    out.write("\n")
