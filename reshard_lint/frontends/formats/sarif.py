"""``--format sarif``: SARIF 2.1.0 for code-scanning services (GitHub, Azure DevOps).

Columns are counted in Unicode code points, as the engine counts them; the run says so
(``columnKind``), since SARIF's default is UTF-16 code units.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence, TextIO
from urllib.parse import quote

from ... import __version__
from .finding import Finding, RuleTable, fix_edits, rule_url

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# Findings that are not rules: a file that could not be parsed, analysed, or read.
PSEUDO_RULES = {
    "RSH001": ("parse-error", "The file could not be parsed, so it was not checked."),
    "RSH002": ("internal-error", "reshard-lint failed while analysing the file; please report it."),
    "RSH003": ("io-error", "The file could not be read or decoded, so it was not checked."),
}


def _uri(path: str) -> dict[str, str]:
    if os.path.isabs(path):
        return {"uri": "file://" + quote(path.replace(os.sep, "/"))}
    return {"uri": quote(path.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}


def _region(line: int, col: int, end_line: int, end_col: int) -> dict[str, int]:
    if not end_line:
        end_line, end_col = line, col + 1
    # SARIF columns are 1-based and the end column is exclusive: 0-based ends map to +1.
    return {"startLine": line, "startColumn": col + 1, "endLine": end_line, "endColumn": max(end_col + 1, 1)
            if (end_line, end_col) > (line, col) else col + 2}


def _level(severity: str) -> str:
    return "warning" if severity == "warning" else "error"


def driver_rules() -> list[dict[str, Any]]:
    from ...rules.docs import rule_doc
    from ...rules import all_rules

    out: list[dict[str, Any]] = []
    for code, (name, text) in PSEUDO_RULES.items():
        out.append({"id": code, "name": name, "shortDescription": {"text": text},
                    "fullDescription": {"text": text}, "defaultConfiguration": {"level": "error"}})
    for r in all_rules():
        doc = rule_doc(r)
        out.append({
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.what or r.summary},
            "help": {"text": doc, "markdown": doc},
            "defaultConfiguration": {"level": _level(r.severity)},
            "properties": {"fixSafety": r.fix_safety, "tags": ["jax", "sharding"]},
        })
        url = rule_url(r.code)
        if url:  # only a page that is published somewhere (the doc itself is in help)
            out[-1]["helpUri"] = url
    return out


def render(findings: Sequence[Finding], rules: RuleTable, out: TextIO) -> None:
    descriptors = driver_rules()
    index = {r["id"]: i for i, r in enumerate(descriptors)}
    results: list[dict[str, Any]] = []
    for f in findings:
        d = f.diag
        loc = {"artifactLocation": _uri(f.path), "region": _region(d.line, d.col, d.end_line, d.end_col)}
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": _level(str(rules.get(d.code, {}).get("severity", "error"))),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": loc}],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.related:
            result["relatedLocations"] = [
                {"id": i, "message": {"text": r.message},
                 "physicalLocation": {"artifactLocation": _uri(r.path if r.path is not None else f.path),
                                      "region": _region(r.line, r.col, 0, 0)}}
                for i, r in enumerate(d.related)]
            steps = [r for r in d.related if r.step]
            if steps:
                # The call reported here, then the code of the other module it runs.
                flow = [{"location": {"physicalLocation": loc, "message": {"text": "the call"}}}] + [
                    {"location": {"physicalLocation": {
                        "artifactLocation": _uri(r.path if r.path is not None else f.path),
                        "region": _region(r.line, r.col, 0, 0)}, "message": {"text": r.message}}}
                    for r in steps]
                result["codeFlows"] = [{"threadFlows": [{"locations": flow}]}]
        edits = fix_edits(f)
        if d.fix is not None and edits is not None:
            result["fixes"] = [{
                "description": {"text": d.fix.title + ("" if d.fix.safe else " (unsafe)")},
                "artifactChanges": [{
                    "artifactLocation": _uri(f.path),
                    "replacements": [{
                        "deletedRegion": {"startLine": e.line, "startColumn": e.col + 1,
                                          "endLine": e.end_line, "endColumn": e.end_col + 1},
                        "insertedContent": {"text": e.replacement},
                    } for e in edits],
                }],
            }]
        results.append(result)
    driver: dict[str, Any] = {"name": "reshard-lint", "version": __version__, "semanticVersion": __version__}
    home = rule_url("RSH201")
    if home:
        driver["informationUri"] = home.rsplit("/docs/", 1)[0]
    driver["rules"] = descriptors
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _root_uri()}},
            "results": results,
        }],
    }
    json.dump(log, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _root_uri() -> str:
    cwd = os.getcwd().replace(os.sep, "/")
    return "file://" + quote(cwd if cwd.endswith("/") else cwd + "/")
