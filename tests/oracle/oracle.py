"""The oracle's pipeline: corpus -> concrete runs + static side -> comparison -> fixes -> report.

Standard library only (the children import jax).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import compare as cmp
from . import mc
from .run import PLATFORMS, ROOT, Program, apply_fixes, project_programs, run_concrete, run_static, with_platforms

FIXTURES = ROOT / "tests" / "fixtures"
PROJECTS = FIXTURES / "projects"


@dataclass
class Corpus:
    """Programs, grouped by the directory tree that holds them (a group is copied whole
    to apply fixes), and programs skipped with the reason."""

    name: str
    programs: list[Program] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # trees the static side reads
    skipped: list[tuple[str, str]] = field(default_factory=list)


def fixture_corpus() -> Corpus:
    c = Corpus("fixtures")
    for py in sorted(FIXTURES.glob("*.py")):
        c.programs.append(Program(f"fixtures/{py.name}", str(FIXTURES), py.name))
    c.roots.append(str(FIXTURES))
    fixes_dir = FIXTURES / "fixes"
    for py in sorted(fixes_dir.glob("*.py")):
        c.programs.append(Program(f"fixtures/fixes/{py.name}", str(fixes_dir), py.name))
    with_platforms(c.programs)
    return c


ORACLE_PROGRAMS = ROOT / "tests" / "oracle" / "programs"


def programs_corpus() -> Corpus:
    """Programs the oracle found problems in (minimized from generated projects)."""
    c = Corpus("oracle-programs")
    for py in sorted(ORACLE_PROGRAMS.glob("*.py")):
        c.programs.append(Program(f"oracle/programs/{py.name}", str(ORACLE_PROGRAMS), py.name))
    with_platforms(c.programs)
    c.roots.append(str(ORACLE_PROGRAMS))
    return c


def standard_corpora(work: Path) -> list[Corpus]:
    return [fixture_corpus(), example_corpus(work), project_corpus(), programs_corpus()]


# jax's own sharding tests that run on 8 CPU devices with the installed jax (the
# long run's real suites; ORACLE_JAX_TESTS=<jax checkout>/tests): (file, absltest
# arguments). Each file runs as one program; a failing test case does not stop the others.
JAX_SUITES = (
    ("array_test.py", ()),
    ("layout_test.py", ()),
    ("memories_test.py", ()),
    ("multi_device_test.py", ()),
    ("shard_alike_test.py", ()),
    ("jax_jit_test.py", ()),
    ("debugging_primitives_test.py", ()),
    ("custom_partitioning_test.py", ()),
    ("linalg_sharding_test.py", ()),
    ("export_test.py", ()),
    ("api_test.py", ()),  # about 100 s; many of its cases fail on jax 0.10.2 (a newer checkout)
)
# files tried and left out, with the reason
JAX_SUITES_LEFT_OUT = (
    ("pjit_test.py", "does not import with jax 0.10.2 at jax cec06d1 (jax.sharding.UnreducedKind)"),
    ("shard_map_test.py", "does not import with jax 0.10.2 at jax cec06d1 (config.use_rgv3)"),
)


def jax_suites_corpus(tests_dir: Path) -> Corpus:
    """jax's test files (JAX_SUITES), each run as a program (absltest main) on CPU only:
    every site is attributed to the test file and line."""
    c = Corpus("jax-tests")
    tests_dir = Path(tests_dir).resolve()
    for name, argv in JAX_SUITES:
        if not (tests_dir / name).exists():
            c.skipped.append((name, f"not in {tests_dir}"))
            continue
        c.programs.append(Program(f"jax-tests/{name}", str(tests_dir), name, timeout=900,
                                  platforms=("cpu",), argv=tuple(argv)))
        c.roots.append(str(tests_dir / name))
    c.skipped += list(JAX_SUITES_LEFT_OUT)
    return c


def project_corpus() -> Corpus:
    c = Corpus("projects")
    for proj in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
        progs = project_programs(proj, prefix=f"projects/{proj.name}/")
        with_platforms(progs, proj)
        c.programs += progs
        c.roots.append(str(proj))
    return c


def example_corpus(workdir: Path) -> Corpus:
    """Every rule's examples, each written to a file of its own."""
    from reshard_lint.rules import all_rules  # the analysis package itself is stdlib-only

    c = Corpus("examples")
    d = workdir / "examples"
    d.mkdir(parents=True, exist_ok=True)
    for rule in all_rules():
        for i, ex in enumerate(rule.examples):
            name = f"{rule.code}_{'fires' if ex.fires else 'clean'}_{i}.py"
            if not ex.runnable:
                c.skipped.append((name, "marked runnable=False (not a program as it stands)"))
                continue
            (d / name).write_text(ex.code)
            c.programs.append(Program(f"examples/{name}", str(d), name))
    with_platforms(c.programs)
    c.roots.append(str(d))
    return c


def _group_of(prog: Program, corpora: list[Corpus]) -> str:
    return prog.root


def run_fixes(corpora: list[Corpus], diags: list[dict], concrete: dict, workdir: Path,
              workers: int = 2) -> tuple[list[dict], dict]:
    """Apply every offered fix (safe and unsafe) on a copy of each tree that has one and
    run the programs that had one again."""
    fixable: dict[str, list[dict]] = {}
    for d in diags:
        if d.get("fix"):
            fixable.setdefault(d["filename"], []).append(d)
    progs = [p for c in corpora for p in c.programs if os.path.realpath(p.path) in fixable]
    if not progs:
        return [], {"programs_with_fixes": 0}
    roots = sorted({p.root for p in progs})
    copies: dict[str, Path] = {}
    findings = []
    fixed = workdir / "fixed"
    for i, r in enumerate(roots):
        dst = fixed / f"{i}_{Path(r).name}"
        shutil.copytree(r, dst, ignore=shutil.ignore_patterns("__pycache__", ".reshard-lint-cache"))
        copies[r] = dst
    # one run over every copy (each project is found by its pyproject.toml, as the
    # static side finds them)
    rc, out = apply_fixes(str(fixed), jobs=workers)
    if rc != 0:
        # the fixing command itself failed: reported as such, not as fixes that do not work
        findings.append(cmp.asdict(cmp.Finding("fix_failed", str(fixed), 0, 0, "fix-tool", "",
                                               f"reshard-lint check --fix exited {rc}: {out[-300:]}")))
        copies = {}
    progs = [p for p in progs if p.root in copies]
    fixed_progs = []
    for p in progs:
        q = Program(p.id, str(copies[p.root]), p.file, p.module, p.timeout, p.platforms)
        fixed_progs.append(q)
    after = run_concrete(fixed_progs, workers=workers, platforms=PLATFORMS)
    figures = Counter()
    for p, q in zip(progs, fixed_progs):
        figures["programs_with_fixes"] += 1
        src = os.path.realpath(p.path)
        old_text = Path(src).read_text(encoding="utf-8", errors="replace")
        new_text = Path(q.path).read_text(encoding="utf-8", errors="replace")
        lm = cmp.line_map(old_text, new_text)
        for plat in PLATFORMS:
            o, n = concrete.get(plat, {}).get(p.id), after.get(plat, {}).get(q.id)
            if o is None or n is None:
                continue
            if n["status"] != "ok" and (o["status"] == "ok" or _error_id(n, lm) != _error_id(o, None)):
                findings.append(cmp.asdict(cmp.Finding(
                    "fix_failed", src, (n.get("error_at") or [None, 0])[1] or 0, 0, "program", "",
                    f"after the fixes ({', '.join(sorted({d['code'] for d in fixable[src]}))}) the program "
                    f"raises on {plat}: {n['error'][:200]} (before: {o['status']} {o['error'][:120]})",
                    sorted({d['code'] for d in fixable[src]}), p.id)))
            for line, detail in _new_site_errors(p, q, o, n):
                # a call the child repaired (a jit, a constraint, an eager operation) so the
                # program went on: raised after the fixes where it did not before
                findings.append(cmp.asdict(cmp.Finding(
                    "fix_failed", src, line, 0, "program", "",
                    f"after the fixes ({', '.join(sorted({d['code'] for d in fixable[src]}))}) a call "
                    f"raises on {plat}: {detail}", sorted({d['code'] for d in fixable[src]}), p.id)))
            for d in fixable[src]:
                if not d["code"].startswith(("RSH2", "RSH3")):
                    continue
                # (every fix of a reported finding is applied, on a line with a noqa that
                # names other codes too: reshard_lint/core/fixes.py)
                figures["site_fixes"] += 1 if plat == "cpu" else 0
                line = lm.get(d["location"]["row"])
                if line is None:
                    continue
                recs = [(plat, r) for r in n.get("sites", []) if r["line"] == line
                        and os.path.realpath(r["path"]) == os.path.realpath(q.path)]
                kind = "jit_out" if d["code"] == "RSH203" and any(r["api"] == "jit" and not r["pairs"]
                                                                   for _, r in recs) else "device_put"
                figures["site_fixes_reached"] += 1 if plat == "cpu" and recs else 0
                obs = cmp._observe(recs, kind)
                if obs.crossing:
                    findings.append(cmp.asdict(cmp.Finding(
                        "fix_failed", src, d["location"]["row"], d["location"]["column"], "fix", "",
                        f"{d['code']} fix applied ({d['fix'].get('applicability')}): the transfer still crosses "
                        f"on {plat}: {obs.summary()}", [d["code"]], p.id)))
    return findings, dict(figures)


def _new_site_errors(p: Program, q: Program, before: dict, after: dict) -> list[tuple[int, str]]:
    """(line in the original file, error) of each call that raised in the fixed program's
    run (``after``, files under ``q.root``) at a place where no call raised before."""
    maps: dict[str, dict[int, int]] = {}

    def original(path: str, line: int) -> tuple[str, int] | None:
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(q.root))
        old, new = Path(p.root) / rel, Path(q.root) / rel
        if rel not in maps:
            try:
                a, b = old.read_text(encoding="utf-8", errors="replace"), new.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            maps[rel] = {v: k for k, v in cmp.line_map(a, b).items()}
        back = maps[rel].get(line)
        return None if back is None else (rel, back)

    raised = {(os.path.relpath(os.path.realpath(r["path"]), os.path.realpath(p.root)), r["line"], r["api"])
              for r in before.get("sites", []) if r.get("error")}
    out = []
    for r in after.get("sites", []):
        if not r.get("error"):
            continue
        where = original(r["path"], r["line"])
        if where is None or (where[0], where[1], r["api"]) not in raised:
            out.append(((where or ("", r["line"]))[1], f"{r['api']} at {r['path']}:{r['line']}: {r['error'][:200]}"))
    return out


def _error_id(res: dict, lm: dict | None) -> tuple:
    """An error's identity across a fix: its type and the user line it came from
    (messages hold object addresses and the device ids a fix may change)."""
    where = res.get("error_at") or [None, None]
    line = where[1]
    if lm is not None and line is not None:
        inv = {v: k for k, v in lm.items()}
        line = inv.get(line, -1)
    return (res["error"].split(":")[0], line)


def oracle(corpora: list[Corpus], workdir: Path, workers: int = 2, fixes: bool = True,
           processes: tuple[int, ...] = ()) -> dict:
    """The comparison over the corpora. ``processes``: also run, as real multi-controller
    jobs of each of these process counts (tests/oracle/mc.py), the programs that use
    ``jax.distributed``, their process index or their local devices (mc.MULTI_WORDS)."""
    t0 = time.time()
    progs = [p for c in corpora for p in c.programs]
    roots = [r for c in corpora for r in c.roots]
    coverage, diags = run_static(roots, cwd=str(ROOT), jobs=workers)
    t1 = time.time()
    concrete = run_concrete(progs, workers=workers, platforms=PLATFORMS)
    multi = [p for p in progs if mc.multi_controller(p)]
    for n in processes if multi else ():
        concrete.update(mc.as_concrete(mc.run_jobs(multi, processes=n), n))
    t2 = time.time()
    result = cmp.compare(coverage, diags, concrete)
    fix_findings, fix_figures = run_fixes(corpora, diags, concrete, workdir, workers) if fixes else ([], {})
    result["findings"] += fix_findings
    result["fix_figures"] = fix_figures
    result["programs"] = len(progs)
    result["platform_runs"] = {p: len(v) for p, v in concrete.items()}
    result["skipped"] = [s for c in corpora for s in c.skipped]
    result["seconds"] = {"static": round(t1 - t0, 1), "concrete": round(t2 - t1, 1),
                         "total": round(time.time() - t0, 1)}
    result["counts"] = dict(Counter(f["kind"] for f in result["findings"]))
    return result


def relative(findings: list[dict], workdir: Path | None = None) -> list[dict]:
    """Paths relative to the repository (or to the work directory, for generated code)."""
    out = []
    for f in findings:
        f = dict(f)
        p = f["path"]
        for base in ([str(workdir)] if workdir else []) + [str(ROOT)]:
            if p.startswith(base):
                p = p[len(base):].lstrip("/")
                break
        f["path"] = p
        out.append(f)
    return out


def text_report(result: dict) -> str:
    fig = result["figures"]
    lines = [
        f"programs: {result['programs']} (status on CPU: {result['program_status']}), "
        f"skipped: {len(result['skipped'])}, platform runs: {result['platform_runs']}",
        f"static sites: {fig.get('sites', 0)} (crossing {fig.get('static_crossing', 0)}, same_devices "
        f"{fig.get('static_same_devices', 0)}, same_pieces {fig.get('static_same_pieces', 0)}, host_data "
        f"{fig.get('static_host_data', 0)}, unresolved "
        f"{fig.get('static_unresolved', 0)}); reached by a run: {fig.get('reached', 0)}; unreached: "
        f"{fig.get('unreached', 0)}; crossing in a run: {fig.get('concrete_crossing', 0)}",
        f"false positives: {result['counts'].get('false_positive', 0)}, wrong verdicts: "
        f"{result['counts'].get('wrong_verdict', 0)}, wrong claims: {result['counts'].get('wrong_claim', 0)}, "
        f"failed fixes: {result['counts'].get('fix_failed', 0)}, misses (unresolved that crossed): "
        f"{fig.get('misses', 0)}",
        f"fixes: {result.get('fix_figures', {})}",
        f"concrete sites with no static site: {result['concrete_sites_without_static_site']}",
        f"crossing verdicts on an order only another topology shows (not checkable here): "
        f"{len(result.get('unverified_platform', []))}",
        f"seconds: {result['seconds']}",
    ]
    lines.append(f"RSH203/RSH204 away from a site (context-mesh operations): raised there in a run "
                 f"{fig.get('nonsite_claims_confirmed', 0)}, not seen raising {fig.get('nonsite_claims_unconfirmed', 0)}")
    if result.get("raised_at_resolved_site"):
        lines.append(f"JAX raised at sites the analysis resolved as same_devices/host_data "
                     f"({len(result['raised_at_resolved_site'])}):")
        lines += [f"  {r}" for r in result["raised_at_resolved_site"][:20]]
    if result.get("wrong_verdict_causes"):
        lines.append(f"wrong verdicts by cause: {result['wrong_verdict_causes']}")
    if result["misses_by_reason"]:
        lines.append("misses by reason:")
        lines += [f"  {n:4d}  {r[:150]}" for r, n in result["misses_by_reason"].items()]
    if result["findings"]:
        lines.append("findings:")
        for f in result["findings"]:
            lines.append(f"  {f['kind']:15s} {f['path']}:{f['line']}:{f['col']} [{f['site_kind']} {f['verdict']}"
                         f" {','.join(f['codes'])}] {f['detail'][:400]}")
    if result["not_runnable"]:
        lines.append(f"programs that reached no site ({len(result['not_runnable'])}):")
        lines += [f"  {pid}: {err}" for pid, err in result["not_runnable"]]
    return "\n".join(lines)
