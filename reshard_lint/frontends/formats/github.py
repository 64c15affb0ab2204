"""GitHub Actions workflow commands: one annotation per finding on the pull request."""

from __future__ import annotations

from typing import Sequence, TextIO

from .finding import Finding, RuleTable


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def render(findings: Sequence[Finding], rules: RuleTable, out: TextIO) -> None:
    for f in findings:
        d = f.diag
        level = "warning" if rules.get(d.code, {}).get("severity") == "warning" else "error"
        props = [f"file={_prop(f.path)}", f"line={d.line}", f"col={d.col + 1}"]
        if d.end_line:
            # GitHub's endColumn is inclusive and 1-based: the last character's column.
            props += [f"endLine={d.end_line}", f"endColumn={max(d.end_col, 1)}"]
        props.append(f"title={_prop(d.code)}")
        out.write(f"::{level} {','.join(props)}::{_data(d.code + ' ' + d.message)}\n")
