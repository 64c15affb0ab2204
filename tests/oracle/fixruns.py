"""Every fix reshard-lint offers on its own rule examples and test fixtures, applied and run.

The corpus: every rule example (each written to a file, ``RSHnnn_fires_i.py`` /
``RSHnnn_clean_i.py`` as the oracle names them), every fixture of tests/fixtures (the fix
fixtures of tests/fixtures/fixes and the fixture projects included). ``apply`` copies it,
asks ``reshard-lint check --format json`` which fixes it offers, applies them all, safe
and unsafe (``reshard-lint check --fix --unsafe-fixes``, the oracle's ``apply_fixes``),
checks the fixed tree again, and applies the fixes a second time.

The programs then run under JAX:
- on 8 CPU devices in one process, with the oracle's machinery (``oracle.oracle`` on the
  programs that got a fix: the originals and the fixed copies, every platform mode, a
  fixed program raising anything new is a ``fix_failed`` finding);
- under real multi-controller JAX, 2 processes of 4 CPU devices on loopback
  (tests/multicontroller/harness.py), for the programs that got a fix of a
  multi-controller bug (RSH201, RSH3xx): each program runs in the harness's processes
  through the oracle child's ``run_program``, with its ``device_put`` / ``to_device``
  recorders (and no repairs), so that every transfer site reached, and what it raised,
  is recorded on each process.

Standard library only on the parent side (the children import jax).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import compare as cmp
from .run import ROOT, Program, apply_fixes, linter, project_programs

FIXTURES = ROOT / "tests" / "fixtures"
# Multi-controller bugs: their fixes are run under 2 processes too.
MULTI_CODES = ("RSH201", "RSH3")
# What multi-controller JAX raises for a move between device sets (RUNTIME-FACTS.md).
CROSSING_ERRORS = ("same set of devices", "not fully addressable", "represents addressable devices",
                   "does not support cross-host", "Cross-host transfers are not supported",
                   "non-addressable device")


@dataclass
class Offer:
    """One offered fix: the finding it fixes, in the original tree and in the fixed one."""

    path: str  # relative to the tree's root
    code: str
    line: int
    col: int
    safe: bool
    title: str
    fixed_line: int | None = None  # the finding's line in the fixed file


@dataclass
class Applied:
    """The corpus before and after the fixes, and what the static side said on both."""

    orig: Path
    fixed: Path
    offers: list[Offer]
    examples: dict[str, bool]  # example file -> runnable
    problems: list[str] = field(default_factory=list)
    figures: Counter = field(default_factory=Counter)


def write_corpus(dst: Path) -> dict[str, bool]:
    """Every rule example under ``dst/examples``, a copy of tests/fixtures under
    ``dst/fixtures``; returns the examples' files and whether each runs as it stands."""
    from reshard_lint.rules import all_rules  # the analysis package is stdlib-only

    ex = dst / "examples"
    ex.mkdir(parents=True)
    runnable = {}
    for rule in all_rules():
        for i, e in enumerate(rule.examples):
            name = f"{rule.code}_{'fires' if e.fires else 'clean'}_{i}.py"
            (ex / name).write_text(e.code, encoding="utf-8")
            runnable[f"examples/{name}"] = e.runnable
    shutil.copytree(FIXTURES, dst / "fixtures",
                    ignore=shutil.ignore_patterns("__pycache__", ".reshard-lint-cache"))
    return runnable


def check_json(root: Path) -> list[dict]:
    import subprocess

    cmd, env = linter()
    proc = subprocess.run([*cmd, "check", "--format", "json", "--isolated", "--exit-zero", "--no-cache",
                           "-j", "2", "."], cwd=root, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]")


def _texts(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def _undefined(text: str, name: str) -> Counter:
    """pyflakes' undefined names of a file (flake8's F821), counted by name."""
    from pyflakes import api as flakes
    from pyflakes import messages

    class Collect:
        def __init__(self) -> None:
            self.found: Counter = Counter()

        def flake(self, m: object) -> None:
            if isinstance(m, messages.UndefinedName):
                self.found[m.message_args[0]] += 1  # type: ignore[attr-defined]

        def unexpectedError(self, *_a: object) -> None:
            pass

        def syntaxError(self, *_a: object) -> None:
            pass

    rep = Collect()
    flakes.check(text, name, rep)  # type: ignore[arg-type]
    return rep.found


def apply(work: Path) -> Applied:
    """Write the corpus, apply every offered fix on a copy, and check the result: every
    problem is a line of ``Applied.problems``."""
    orig, fixed = work / "orig", work / "fixed"
    examples = write_corpus(orig)
    before = check_json(orig)
    offers = [Offer(d["filename"], d["code"], d["location"]["row"], d["location"]["column"],
                    d["fix"]["applicability"] == "safe", d["fix"]["message"])
              for d in before if d.get("fix")]
    shutil.copytree(orig, fixed)
    out = Applied(orig, fixed, offers, examples)
    rc, log = apply_fixes(str(fixed), jobs=2)
    if rc != 0:
        out.problems.append(f"reshard-lint check --fix --unsafe-fixes exited {rc}: {log[-500:]}")
        return out
    old, new = _texts(orig), _texts(fixed)
    after = check_json(fixed)
    by_place = {(d["filename"], d["code"], d["location"]["row"]) for d in after}
    for o in offers:
        a = old[o.path].decode("utf-8", "replace")
        b = new[o.path].decode("utf-8", "replace")
        if a == b:
            out.problems.append(f"{o.path}:{o.line} {o.code}: the fix was offered and changed nothing ({o.title})")
            continue
        o.fixed_line = cmp.line_map(a, b).get(o.line)
        if (o.path, o.code, o.fixed_line) in by_place:
            out.problems.append(f"{o.path}:{o.line} {o.code}: still reported after its fix ({o.title})")
    left = [d for d in after if d.get("fix")]
    for d in left:
        out.problems.append(f"{d['filename']}:{d['location']['row']} {d['code']}: a fix is still offered "
                            f"after --fix --unsafe-fixes: {d['fix']['message']}")
    for rel in sorted({o.path for o in offers}):
        text = new[rel].decode("utf-8", "replace")
        try:
            ast.parse(new[rel])
        except SyntaxError as e:
            out.problems.append(f"{rel}: the fixed file does not parse: {e}")
            continue
        gained = _undefined(text, rel) - _undefined(old[rel].decode("utf-8", "replace"), rel)
        if gained:
            out.problems.append(f"{rel}: the fixes use names the file does not define: {sorted(gained)}")
    rc, log = apply_fixes(str(fixed), jobs=2)
    again = _texts(fixed)
    changed = sorted(k for k in new if again.get(k) != new[k])
    if rc != 0 or changed:
        out.problems.append(f"a second --fix run is not a no-op (exit {rc}): changed {changed}")
    for o in offers:
        kind = "examples" if o.path.startswith("examples/") else "fixtures"
        out.figures[f"offered_{'safe' if o.safe else 'unsafe'}_{kind}"] += 1
        out.figures[f"offered_{o.code}"] += 1
    out.figures["files_with_fixes"] = len({o.path for o in offers})
    return out


# ---------------------------------------------------------------- programs

def programs(root: Path, applied: Applied, codes: tuple[str, ...] | None = None) -> list[Program]:
    """The programs of the tree ``root`` (the original or the fixed one) that got a fix
    (of a code starting with one of ``codes``, when given), each run as the oracle runs it:
    an example or fixture file as ``__main__``, a project's module with its root on the path."""
    fixed_files = {o.path for o in applied.offers if codes is None or o.code.startswith(codes)}
    out: list[Program] = []
    projects = root / "fixtures" / "projects"
    for rel in sorted(fixed_files):
        if rel.startswith("examples/"):
            if applied.examples.get(rel):
                out.append(Program(rel, str(root / "examples"), rel.split("/", 1)[1]))
        elif rel.startswith("fixtures/projects/"):
            proj = projects / rel.split("/")[2]
            for p in project_programs(proj, prefix=f"fixtures/projects/{proj.name}/"):
                if p.id == rel:
                    out.append(p)
        else:
            path = root / rel
            out.append(Program(rel, str(path.parent), path.name))
    return out


# ---------------------------------------------------------------- multi-controller runs

_SNIPPET = """\
import json, sys
sys.path.insert(0, {repo!r})
from tests.oracle import child
child.install_transfer_recorders()
import jax
res = child.run_program({job!r})
with open({out!r} + ".p%d.json" % jax.process_index(), "w") as fh:
    json.dump(res, fh)
if res["status"] not in ("ok",):
    raise RuntimeError(res["error"])
"""


def snippet(prog: Program, out: Path) -> str:
    """A harness snippet that runs ``prog`` through the oracle child and writes each
    process's record to ``out.p<process>.json``."""
    return _SNIPPET.format(repo=str(ROOT), job=prog.job(), out=str(out))


def read_runs(out: Path, processes: int) -> list[dict | None]:
    got: list[dict | None] = []
    for i in range(processes):
        path = Path(f"{out}.p{i}.json")
        got.append(json.loads(path.read_text()) if path.exists() else None)
    return got


def sites_at(runs: list[dict | None], path: Path, line: int | None) -> list[dict]:
    """Every record of a transfer at ``path:line``, on every process."""
    if line is None:
        return []
    want = os.path.realpath(path)
    return [r for run in runs if run for r in run.get("sites", [])
            if r["line"] == line and os.path.realpath(r["path"]) == want]
