"""The committed baseline of problems the oracle finds today: tests/oracle/known.json.

Each entry: ``file`` (relative to the repository, or ``generated/<seed>/...`` for a
generated project), ``line``, ``kind`` and a one-line ``why`` that was verified by
reading the code and the run. The comparison is exact: a new problem fails, and so does
a listed one that no longer happens (remove it from the baseline).
"""

from __future__ import annotations

import json
from pathlib import Path

KNOWN = Path(__file__).with_name("known.json")
FAILURES = ("false_positive", "wrong_verdict", "wrong_claim", "fix_failed")


def load() -> list[dict]:
    return json.loads(KNOWN.read_text()) if KNOWN.exists() else []


def key(f: dict) -> tuple:
    return (f.get("file", f.get("path")), f["line"], f["kind"])


def unexplained(findings: list[dict], scope=None) -> tuple[list[dict], list[dict]]:
    """(findings not in the baseline, baseline entries not found), for the failure kinds;
    ``scope`` limits the baseline to entries whose file it accepts."""
    known = [k for k in load() if scope is None or scope(k["file"])]
    findings = [f for f in findings if scope is None or scope(f["path"])]
    got = {key(f) for f in findings if f["kind"] in FAILURES}
    want = {key(k) for k in known}
    new = [f for f in findings if f["kind"] in FAILURES and key(f) not in want]
    gone = [k for k in known if key(k) not in got]
    return new, gone
