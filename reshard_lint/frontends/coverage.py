"""``reshard-lint coverage``: every transfer site, and what the analysis knows of it.

A site is a call of the transfer family (device_put, to_device, jitted calls with
shardings, constraints, reshard, asarray(device=), global-array assembly, eager
operations between two arrays of known meshes). Sites the analysis ran get a verdict
from analysis/verdicts.py; sites spelled in the file that it never ran (inside a
callback it does not follow, an expected-error block) are unresolved, with that reason.
The command reports; it does not judge: it exits 0, or 2 where the analysis itself
failed somewhere (a ``Failure``, listed in every format: a site is never lost silently).
"""

from __future__ import annotations

import ast
import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence, TextIO

from ..core.vocabulary import JAX, JAX_PREFIX, SITE_NAMES, TRANSFER_HINTS, TRANSFER_NAMES
from ..engine.runner import INTERNAL_ERROR, IO_ERROR, PARSE_ERROR  # (not engine.engine: a warm run imports no engine)
from .coverage_failures import Failure, failure, stopped as lines_stopped, what as what_failed
from ..stages.runtime_facts import COLOCATED
from .coverage_modules import ModuleFacts, apply as cross_modules, facts_of, text_facts
from .coverage_relay import text_refs

# The final names of the transfer calls, as spelled through any jax import (core/vocabulary.py).
_SPELLED = TRANSFER_NAMES | SITE_NAMES
_TEXT_HINTS = tuple(sorted(_SPELLED)) + TRANSFER_HINTS


@dataclass
class Site:
    path: str
    line: int
    col: int  # 1-based, as flake8 prints it
    kind: str
    verdict: str
    detail: str  # evidence (resolved) or reason (unresolved)
    # Unresolved: what stopped the analysis, where it is known (analysis/reasons.py):
    # ``flax.nnx.state (flax, not modelled)``, ``parameter 'mesh' of train_step``.
    culprit: str = ""


@dataclass
class FileCoverage:
    path: str
    sites: list[Site] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    # Where the file's code runs (docs/runtimes.md): why it is single-controller ("": it
    # is multi-controller), whether some of its code runs only through colocated Python,
    # and (why, code) of each finding of the multi-controller rules that this silenced.
    runtime_reason: str = ""
    colocated: bool = False
    silenced: list[tuple[str, str]] = field(default_factory=list)
    modules: ModuleFacts | None = None  # for the pass across the run's files (coverage_modules.py)

    @property
    def error(self) -> str | None:
        """What failed in the file, or None."""
        return "; ".join(f.message for f in self.failures) or None


def file_coverage(text: str, path: str, settings: Mapping[str, object]) -> FileCoverage:
    out = FileCoverage(path)
    # A file with no transfer call of its own may call another module's function that
    # makes one (coverage_modules.py): any file that imports is analysed.
    if not any(h in text for h in _TEXT_HINTS):
        if "import" not in text:
            return out
        from ..engine.engine import engine_for

        projects = engine_for(settings).projects
        if not any(name.endswith(">") for name in projects.device_imports(text, path)[0]):
            view = projects.view(path)  # nothing here runs a transfer: its imports alone
            out.modules = text_facts(text, path, view) if view is not None else \
                ModuleFacts(os.path.realpath(path), relay=text_refs(text))
            return out
    from ..analysis.reasons import AFTER_FAILURE, NOT_REACHED
    from ..analysis.verdicts import Verdict, classify, classify_fetch
    from ..engine.engine import check_source, engine_for

    # call node id -> (the node, the site's kind, its verdicts, whether only coverage's own
    # events (fetches, events.Site) made it)
    found: dict[int, tuple[Any, str, list[Verdict], bool]] = {}
    relayed: list[tuple[Any, str, str, str]] = []
    values: dict[int, Any] = {}  # call node id -> (the value it moves, its target), as written
    spellings: dict[str, str] = {}
    ctx_box: list[Any] = []

    def observe(ctx: Any, transfers: list[Any], anchored: Mapping[int, Any]) -> None:
        ctx_box.append(ctx)
        spellings.update(ctx.spellings)
        out.runtime_reason = ctx.decision.reason if ctx.runtime == "single-controller" else ""
        out.colocated = bool(ctx.colocated)
        strongest: dict[int, tuple[int, str, str]] = {}
        for key, priority, diag, why in ctx.runtime_silenced:
            if key not in strongest or priority > strongest[key][0]:
                strongest[key] = (priority, why, diag.code)
        out.silenced = sorted((why, code) for _, why, code in strongest.values())
        silent = {key: (diag, why) for key, _, diag, why in ctx.runtime_silenced}

        def judged(ev: Any, otherwise: Callable[[], Verdict]) -> Verdict:
            """The verdict of the diagnostic anchored at the call, else of the one the
            runtime silenced there (a crossing that works here: docs/runtimes.md), else
            ``otherwise``'s."""
            diag = anchored.get(id(ev.node))
            if diag is not None:
                return Verdict("crossing", f"{diag.code} {diag.message}")
            quiet = silent.get(id(ev.node))
            if quiet is not None:
                return Verdict("crossing", f"{quiet[0].code} silent ({quiet[1]}): {quiet[0].message}")
            return otherwise()

        for ev in transfers:
            v = judged(ev, lambda: classify(ctx, ev, None))
            found.setdefault(id(ev.node), (ev.node, ev.kind, [], False))[2].append(v)
            values[id(ev.node)] = (ev.value_node, getattr(ev, "target_node", None))
        for ev in ctx.coverage_sites:
            # Fetches, and the sites no rule reads (events.Site: a Transfer of the same
            # call takes its place).
            fetch = hasattr(ev, "target") is False
            if not fetch and id(ev.node) in found and found[id(ev.node)][0] is ev.node and not \
                    found[id(ev.node)][3]:
                continue
            v = judged(ev, lambda: classify_fetch(ctx, ev) if fetch else classify(ctx, ev, None))
            found.setdefault(id(ev.node), (ev.node, "fetch" if fetch else ev.kind, [], True))[2].append(v)
            values[id(ev.node)] = (ev.value_node, getattr(ev, "target_node", None))
        for ev in ctx.relayed_transfers:
            diag = anchored.get(id(ev.node))
            v = Verdict("crossing", f"{diag.code} {diag.message}") if diag is not None else classify(ctx, ev, None)
            relayed.append((ev, v.verdict, v.detail, v.culprit))

    try:
        # The whole file, without the gate (sites are counted where no rule can fire); a
        # failure of the analysis in one function is noted there and the rest goes on.
        check_source(text, path, engine=engine_for(settings), imported=frozenset(), gate=False,
                     slicing=False, observer=observe, raise_errors=True, contain_errors=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # A file Python cannot parse has no sites we can see; one nested deeper than the
        # analysis can follow is not read either.
        line = getattr(exc, "lineno", None) or 1
        out.failures.append(Failure(path, line, getattr(exc, "offset", None) or 1, PARSE_ERROR,
                                    f"could not parse the file: {type(exc).__name__}"))
        return out
    if not ctx_box:
        return out
    ctx = ctx_box[0]
    for where, what in ctx.failures or ():
        out.failures.append(failure(ctx, path, where, f"internal error while analysing {what_failed(where)}: {what}"))
    reached: set[tuple[int, int]] = set()
    moved: dict[tuple[int, int], Any] = {}
    for node, kind, verdicts, _ in found.values():
        try:
            line, col, _, _ = ctx.span(node)
        except KeyError:
            # The analysis placed a transfer of another module's code among this file's
            # (a bug of the tool): said where it is, not dropped.
            out.failures.append(failure(ctx, path, node, f"internal error: a {kind} of another module "
                                        "was reported among this file's transfer sites"))
            continue
        reached.add((line, col))
        moved[(line, col + 1)] = values.get(id(node), (None, None))
        out.sites.append(Site(path, line, col + 1, kind, *_merge(verdicts)))
    stopped = lines_stopped(ctx)
    for line, col, name in _spelled_sites(ctx.module.tree, text, spellings):
        if (line, col) not in reached:
            why = AFTER_FAILURE if any(a <= line <= b for a, b in stopped) else NOT_REACHED
            out.sites.append(Site(path, line, col + 1, name, "unresolved", why))
    out.sites.sort(key=lambda s: (s.line, s.col))
    out.modules = facts_of(ctx, path, {(s.line, s.col): moved.get((s.line, s.col), (None, None))
                                       for s in out.sites}, relayed)
    return out


def _merge(verdicts: list[Any]) -> tuple[str, str, str]:
    """One verdict for a call the analysis ran in several contexts: they must agree.
    (verdict, detail, culprit): an unresolved one's from the first context that is
    unresolved, in the order the analysis ran them."""
    from ..analysis.reasons import OTHER

    first = verdicts[0]
    if any(v.verdict == "crossing" for v in verdicts):
        hit = next(v for v in verdicts if v.verdict == "crossing")
        return hit.verdict, hit.detail, ""
    if all(v.verdict == first.verdict for v in verdicts):
        return first.verdict, first.detail, first.culprit
    unresolved = next((v for v in verdicts if v.verdict == "unresolved"), None)
    return ("unresolved", unresolved.detail, unresolved.culprit) if unresolved is not None \
        else ("unresolved", OTHER, "")


def _spelled_sites(tree: ast.Module, text: str, spellings: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """(line, 0-based column, name) of each transfer call of ``tree`` (Python's tree of
    ``text``) spelled through a jax import."""
    local_to_qual = {local: qual.split(":", 1)[-1] for qual, local in spellings.items()}
    lines = text.splitlines()
    out: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        parts: list[str] = []
        while isinstance(f, ast.Attribute):
            parts.append(f.attr)
            f = f.value
        if not isinstance(f, ast.Name):
            continue
        parts.append(f.id)
        name = parts[0]
        root = local_to_qual.get(f.id, "")
        if name not in _SPELLED or not (root == JAX or root.startswith(JAX_PREFIX)):
            continue
        if len(parts) == 1 and not root.endswith("." + name):
            continue
        raw = lines[node.lineno - 1].encode("utf-8") if node.lineno <= len(lines) else b""
        col = len(raw[:node.col_offset].decode("utf-8", errors="replace"))
        out.append((node.lineno, col, name))
    return out


# ---------------------------------------------------------------------------- report


@dataclass
class Decision:
    """Files analysed under one reason the multi-controller rules are silent, and what those
    rules would have reported there (one finding per call, as `check` reports them)."""

    reason: str
    files: int = 0
    findings: int = 0
    codes: dict[str, int] = field(default_factory=dict)


TOP_CULPRITS = 5  # culprits listed per reason in the summary


@dataclass
class Report:
    files: int = 0
    sites: list[Site] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    decisions: dict[str, Decision] = field(default_factory=dict)

    def add_decisions(self, fc: FileCoverage) -> None:
        reasons = [r for r in (fc.runtime_reason, COLOCATED if fc.colocated and not fc.runtime_reason else "") if r]
        for reason in reasons:
            self.decisions.setdefault(reason, Decision(reason)).files += 1
        for why, code in fc.silenced:
            d = self.decisions.setdefault(why, Decision(why))
            d.findings += 1
            d.codes[code] = d.codes.get(code, 0) + 1

    def runtime_decisions(self) -> list[dict[str, Any]]:
        rows = sorted(self.decisions.values(), key=lambda d: (-d.findings, -d.files, d.reason))
        return [{"reason": d.reason, "files": d.files, "findings": d.findings,
                 "codes": dict(sorted(d.codes.items()))} for d in rows]

    def counts(self) -> dict[str, int]:
        from ..analysis.verdicts import VERDICTS

        c = Counter(s.verdict for s in self.sites)
        return {v: c.get(v, 0) for v in VERDICTS}

    def reasons(self) -> dict[str, int]:
        c = Counter(s.detail for s in self.sites if s.verdict == "unresolved")
        return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

    def culprits(self, top: int = TOP_CULPRITS) -> dict[str, dict[str, int]]:
        """Per reason (in the order of ``reasons``), its ``top`` most frequent culprits with
        their counts of unresolved sites, most first (ties by name); a reason none of whose
        sites names a culprit is left out."""
        per: dict[str, Counter[str]] = {}
        for s in self.sites:
            if s.verdict == "unresolved" and s.culprit:
                per.setdefault(s.detail, Counter())[s.culprit] += 1
        return {r: dict(sorted(per[r].items(), key=lambda kv: (-kv[1], kv[0]))[:top])
                for r in self.reasons() if r in per}

    def summary(self, with_sites: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "files": self.files,
            "sites": len(self.sites),
            "verdicts": self.counts(),
            "unresolved_reasons": self.reasons(),
            "unresolved_culprits": self.culprits(),
            "runtime_decisions": self.runtime_decisions(),
            "failures": [asdict(f) for f in self.failures],
        }
        if with_sites:
            out["site_list"] = [asdict(s) for s in self.sites]
        return out


def collect(paths: Sequence[str], settings: Mapping[str, object], jobs: int) -> Report:
    from ..core.sources import read_bytes
    from ..core.sources import SourceError, decode

    report = Report(files=len(paths))
    items: list[tuple[int, str, str]] = []
    for i, p in enumerate(paths):
        try:
            items.append((i, decode(read_bytes(p), p).text, p))
        except SourceError as exc:
            report.failures.append(Failure(p, 1, 1, IO_ERROR, f"could not read the file: {exc.reason}"))
    results: dict[int, FileCoverage] = {}

    def take(index: int, out: FileCoverage) -> None:
        results[index] = out

    global _SETTINGS
    _SETTINGS = dict(settings)
    items.sort(key=lambda it: -len(it[1]))
    if jobs > 1 and len(items) > 1:
        _share(items, settings, jobs, len(paths), take)
    for i, text, p in items:
        if i not in results:
            take(*_work((i, text, p)))
    for i, text, p in items:
        if results[i].modules is None:
            # No facts of its own (nothing to run, an error): what it names still counts
            # against a function of another module (coverage_relay.py).
            results[i].modules = ModuleFacts(os.path.realpath(p), relay=text_refs(text))
    cross_modules([(m, results[i].sites) for i in sorted(results) if (m := results[i].modules) is not None],
                  {os.path.realpath(results[i].path): results[i].path for i in results})
    for i in sorted(results):
        fc = results[i]
        report.sites.extend(fc.sites)
        report.add_decisions(fc)
        report.failures.extend(fc.failures)
    report.sites.sort(key=lambda s: (s.path, s.line, s.col))
    report.failures.sort(key=lambda f: (f.path, f.line, f.col, f.message))
    return report


_SETTINGS: dict[str, object] = {}


def _share(items: list[tuple[int, str, str]], settings: Mapping[str, object], jobs: int, files: int,
           take: Callable[[int, FileCoverage], None]) -> None:
    """``items`` on ``jobs - 1`` workers and this process, which also takes every file that
    reads the project's modules: their summaries are made here, once per run however
    many files import them (as ``check`` does, runner.py)."""
    from ..engine.pipeline import Workers, share_keeping
    from ..project.projects import device_imports

    with Workers(jobs - 1, files) as workers:
        share_keeping(workers, 1, items, lambda it: bool(device_imports(it[1], it[2], settings)[0]), _work,
                      lambda _item, result: take(*result), lambda it: take(*_work(it)))


def _work(item: tuple[int, str, str]) -> tuple[int, FileCoverage]:
    index, text, path = item
    try:
        return index, file_coverage(text, path, _SETTINGS)
    except Exception as exc:  # noqa: BLE001 - one file's failure must not lose the others
        return index, FileCoverage(path, failures=[
            Failure(path, 1, 1, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")])


def render_text(report: Report, out: TextIO, with_sites: bool = False, top: int = 10) -> None:
    total = len(report.sites)
    counts = report.counts()

    def pct(n: int) -> str:
        return f"{100 * n / total:5.1f}%" if total else "    -"

    if with_sites:
        for s in report.sites:
            culprit = f": {s.culprit}" if s.culprit else ""
            out.write(f"{s.path}:{s.line}:{s.col}: {s.kind}: {s.verdict}: {s.detail}{culprit}\n")
        out.write("\n")
    out.write(f"{total} transfer sites in {report.files} files\n")
    for v, n in counts.items():
        out.write(f"  {v:<13} {n:>7}  {pct(n)}\n")
    resolved = total - counts["unresolved"]
    out.write(f"  {'resolved':<13} {resolved:>7}  {pct(resolved)}\n")
    reasons = report.reasons()
    if reasons:
        culprits = report.culprits()
        out.write("\nunresolved, by reason:\n")
        for r, n in list(reasons.items())[:top]:
            out.write(f"  {n:>7}  {r}\n")
            for c, k in culprits.get(r, {}).items():
                out.write(f"  {'':>7}  {k:>7}  {c}\n")
    per_file = Counter(s.path for s in report.sites if s.verdict == "unresolved")
    if per_file:
        out.write("\nfiles with the most unresolved sites:\n")
        for p, n in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
            out.write(f"  {n:>7}  {p}\n")
    decisions = report.runtime_decisions()
    if decisions:
        out.write("\nruntime decisions (the multi-controller rules are silent there):\n")
        out.write(f"  {'files':>7}  {'findings':>8}  reason\n")
        for d in decisions:
            codes = ", ".join(f"{c} {n}" for c, n in d["codes"].items())
            out.write(f"  {d['files']:>7}  {d['findings']:>8}  {d['reason']}{f' ({codes})' if codes else ''}\n")
    if report.failures:
        out.write("\nnot analysed, in whole or in part:\n")
        for f in report.failures:
            out.write(f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}\n")


def render_json(report: Report, out: TextIO, with_sites: bool = False) -> None:
    json.dump(report.summary(with_sites), out, indent=2)
    out.write("\n")


# ---------------------------------------------------------------------------- command


def add_parser(sub: Any) -> None:
    c = sub.add_parser("coverage", help="what the analysis knows of every transfer site",
                       description="Count every transfer site (device_put, constraints, jit shardings, "
                                   "global-array assembly ...) by what the analysis knows of it: a "
                                   "crossing, same devices, host data, or unresolved with the reason. "
                                   "Exit status 0: it reports, it does not judge.")
    c.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--sites", action="store_true",
                   help="list every site with its verdict and evidence, or its reason")
    from ..core.config import RUNTIMES

    # As for check and explain: a verdict can depend on where the code runs (a crossing
    # single-controller JAX carries out is resolved there) and on the target platforms.
    c.add_argument("--runtime", choices=RUNTIMES,
                   help="where the programs run (as for check; overrides the configuration's runtime)")
    c.add_argument("--platforms", metavar="LIST",
                   help="target platforms, comma-separated: tpu,gpu,cpu (default: the configuration's)")
    c.add_argument("--config", metavar="FILE", help="read settings from this pyproject.toml")
    c.add_argument("--isolated", action="store_true", help="ignore configuration files")
    c.add_argument("--extend-exclude", metavar="GLOBS", help="more paths or names to skip (comma-separated)")
    c.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                   help="worker processes (default: all cores)")


def cmd_coverage(args: Any, stdout: TextIO) -> int:
    import os

    from .command_setup import config_for, cpu_count, err, rule_settings
    from ..engine.runner import discover

    args.no_cache, args.cache_dir, args.stdin_filename = True, None, None
    paths = args.paths or ["."]
    args.paths = paths
    cfg, rules, _ = config_for(args)
    settings = rule_settings(rules, cfg, args)
    excludes = cfg.excludes + [p for p in (args.extend_exclude or "").split(",") if p]
    files, missing = discover(paths, excludes, cfg.root)
    for m in missing:
        err(f"{m}: no such file or directory")
    report = collect(files, settings, args.jobs if args.jobs and args.jobs > 0 else cpu_count())
    placed: list[Site | Failure] = [*report.sites, *report.failures]
    for s in placed:
        rel = os.path.relpath(s.path) if os.path.isabs(s.path) else s.path
        s.path = s.path if rel.startswith("..") else rel
    if args.format == "json":
        render_json(report, stdout, args.sites)
    else:
        render_text(report, stdout, args.sites)
    # Exit status as check's: 2 where the analysis itself failed (its sites there are
    # not all counted), else 0: coverage reports, it does not judge.
    return 2 if any(f.code == INTERNAL_ERROR for f in report.failures) else 0
