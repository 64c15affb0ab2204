"""Resolved coverage verdicts on real code are claims: each one's evidence is checked here.

The installed jax package is real code every test environment has; the bundled example
adds crossings and host data. Every resolved site in these files is checked against the
source: host data names an expression found at the line it cites, a put with no target
has no target, a crossing is a diagnostic the command also reports.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

from .conftest import ROOT, run

_SPEC = importlib.util.find_spec("jax")  # where it is installed, without importing it
assert _SPEC is not None and _SPEC.origin is not None
JAX = Path(_SPEC.origin).parent
FILES = [
    JAX / "_src" / "array.py",
    JAX / "experimental" / "colocated_python" / "serialization.py",
    JAX / "experimental" / "jax2tf" / "call_tf.py",
    ROOT / "examples" / "train.py",
]
HOST = re.compile(r"^'.*' is host data or uncommitted: (?P<expr>.+?)"
                  r"(?: \(uncommitted\)| \(an uncommitted key\))? \(line (?P<line>\d+)\)$")


def _sites() -> list[dict]:
    r = run("coverage", "--format", "json", "--sites", "--isolated", *map(str, FILES), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sum(out["verdicts"].values()) == out["sites"] == len(out["site_list"])
    return out["site_list"]


def _call_at(path: Path, line: int, col: int) -> ast.Call:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    text = path.read_text(encoding="utf-8").splitlines()[line - 1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == line and \
                len(text.encode()[:node.col_offset].decode()) == col - 1:
            return node
    raise AssertionError(f"no call at {path}:{line}:{col}")


def test_every_resolved_site_in_real_code_has_evidence_that_holds() -> None:
    sites = _sites()
    resolved = [s for s in sites if s["verdict"] != "unresolved"]
    kinds = {s["verdict"] for s in resolved}
    assert kinds == {"crossing", "same_devices", "host_data"}, kinds
    assert len(resolved) >= 10
    check = run("check", "--isolated", "--exit-zero", "--format", "concise",
                str(ROOT / "examples" / "train.py"), cwd=ROOT)
    reported = {(int(m[1]), int(m[2]), m[3]) for m in re.finditer(r":(\d+):(\d+): (RSH\d{3}) ", check.stdout)}
    for s in resolved:
        path = Path(s["path"]) if Path(s["path"]).is_absolute() else ROOT / s["path"]
        lines = path.read_text(encoding="utf-8").splitlines()
        if s["verdict"] == "crossing":
            assert (s["line"], s["col"], s["detail"][:6]) in reported, s
        elif s["verdict"] == "host_data":
            m = HOST.match(s["detail"])
            assert m, s
            expr = m["expr"].rstrip(".")
            cited = " ".join(lines[int(m["line"]) - 1].split())
            assert expr[:20] in cited, (s, cited)
            assert re.match(r"(np|numpy|jnp|jax\.numpy|jax\.random)\.", expr), s
        else:
            call = _call_at(path, s["line"], s["col"])
            if s["detail"].startswith("no target"):
                assert len(call.args) == 1 and not call.keywords, s
            else:
                assert "same devices in the same order" in s["detail"] or "own sharding" in s["detail"], s
