"""The standalone command: ``reshard-lint check PATHS``, ``reshard-lint rule CODE``.

Exit status, as flake8 and ruff have it: 0 nothing found; 1 findings (or, with --diff,
changes to make), among them a file that could not be parsed (RSH001) or read or decoded
(RSH003, like flake8's E902), which --exit-zero turns into 0; 2 a usage or configuration
error, an internal error (RSH002), or a fix that could not be written. Status 2 wins
over 1, and every other file is still checked and reported: one broken file never hides
the rest.

Imports stay lazy: a warm run over an unchanged tree must not import the engine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Sequence, TextIO

from .. import __version__
from ..core.config import RUNTIMES, ConfigError, check_codes, split_codes
from ..core.diagnostic import Diagnostic
from ..engine.runner import (BUILTIN_CODES, ERROR_CODES, INTERNAL_ERROR, IO_ERROR, PARSE_ERROR, FileReport,
                             decode_error, discover, io_error_diagnostic, lint_files, lint_text, noqa_unknown,
                             per_file_ignored, project_device_imports, read_error)
from ..core.sources import SourceError
from .command_setup import UsageError, config_for, cpu_count, err, rule_settings

MAX_FIX_ROUNDS = 10
PROGRESS_MIN_FILES = 100


def _summary(msg: str) -> None:
    print(msg, file=sys.stderr)


# ---------------------------------------------------------------------------- selection


@dataclass
class Selection:
    select: list[str]
    ignore: list[str]

    def enabled(self, code: str, per_file_ignore: Sequence[str] = ()) -> bool:
        """The most specific of select/ignore decides (a tie: ignore); per-file ignores always win.

        RSH001 and RSH003 are selected like a rule's code; RSH002, a bug, is always shown.
        """
        if code == INTERNAL_ERROR:
            return True
        if any(code.startswith(s) for s in per_file_ignore):
            return False
        best_sel = max((len(s) for s in self.select if code.startswith(s)), default=-1)
        best_ign = max((len(s) for s in self.ignore if code.startswith(s)), default=-1)
        return best_sel >= 0 and best_sel > best_ign

    def named_off(self, code: str, per_file_ignore: Sequence[str] = ()) -> bool:
        """Whether an ignore entry (or a per-file ignore) names ``code``, rather than a
        narrower selection leaving it out."""
        return any(code.startswith(s) for s in [*self.ignore, *per_file_ignore])


# ---------------------------------------------------------------------------- results


@dataclass
class FileOutcome:
    report: FileReport
    kept: list[Diagnostic] = field(default_factory=list)
    silenced: list[Diagnostic] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    fixed: int = 0
    new_text: str | None = None  # the fixed text, when fixes changed the file
    new_diagnostics: list[Diagnostic] = field(default_factory=list)  # engine output on new_text


def _filter(diags: Sequence[Diagnostic], sel: Selection, extra_ignore: Sequence[str]) -> list[Diagnostic]:
    return [d for d in diags if sel.enabled(d.code, extra_ignore)]


def _post(report: FileReport, text: str | None, diags: Sequence[Diagnostic], sel: Selection,
          extra_ignore: Sequence[str]) -> tuple[list[Diagnostic], list[Diagnostic], list[str]]:
    """(kept, silenced by noqa, lines); ``text`` None: the report's own text."""
    from ..core import noqa
    from ..core.fixes import split_lines

    diags = _filter(diags, sel, extra_ignore)
    if not diags:
        return [], [], []
    lines = split_lines(report.source.text if text is None else text)
    # engine.check_source's last stage, here: the cache holds what comes before it.
    kept, silenced = noqa.selected(diags, lines, lambda _code: True, ERROR_CODES)
    return kept, silenced, lines


def _missing_reason(path: str) -> str:
    """The RSH003 message for a path given on the command line that does not exist (as
    flake8's E902 and ruff's), in sources.read_bytes's words for a broken link. It names
    a path, not a file: it may have been meant as a directory."""
    from ..core.sources import SourceError, read_bytes

    if os.path.islink(path):
        try:
            read_bytes(path)
        except SourceError as exc:
            return read_error(exc.reason)
    return "could not check the path: no such file or directory"


def _fix_file(out: FileOutcome, sel: Selection, extra_ignore: Sequence[str], settings: dict[str, object],
              unsafe: bool) -> str | None:
    """Apply fixes in rounds until nothing changes; returns a reason when it must not be written."""
    from ..core import fixes

    src = out.report.source
    assert src is not None
    text = src.text
    engine_diags = out.report.diagnostics
    diags = _filter(engine_diags, sel, extra_ignore)
    applied_total = 0
    for _ in range(MAX_FIX_ROUNDS):
        if any(d.code in ERROR_CODES for d in diags):
            break
        new, applied = fixes.apply(text, [d for d in diags if d.fix is not None], unsafe=unsafe)
        if not applied or new == text:
            break
        text = new
        applied_total += len(applied)
        engine_diags = lint_text(text, src.path, settings)
        diags = _filter(engine_diags, sel, extra_ignore)
    if text == src.text:
        return None
    import ast

    try:
        ast.parse(text)
    except Exception as exc:  # noqa: BLE001 - any failure means: do not write
        return f"the fixed file would not parse ({type(exc).__name__}: {str(exc).splitlines()[0]}); not fixed"
    if any(d.code in ERROR_CODES for d in diags):
        return "the fixed file could not be analysed again; not fixed"
    out.new_text = text
    out.new_diagnostics = list(engine_diags)
    out.fixed = applied_total
    out.kept, out.silenced, out.lines = _post(out.report, text, diags, Selection(["RSH"], []), ())
    return None


def _unified_diff(path: str, old: str, new: str) -> str:
    import difflib

    from ..core.fixes import split_lines

    a, b = split_lines(old), split_lines(new)
    for lines in (a, b):
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n\\ No newline at end of file\n"
    return "".join(difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}"))


# ---------------------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace, stdout: TextIO) -> int:
    from ..core.cache import Cache
    from .formats import Finding, formatter

    paths: list[str] = args.paths or ["."]
    use_stdin = paths == ["-"]
    if "-" in paths and not use_stdin:
        raise UsageError("'-' (standard input) cannot be combined with other paths")
    if args.diff and (args.fix or args.fix_only):
        flag = "--fix" if args.fix else "--fix-only"
        raise UsageError(f"--diff shows the fixes without applying them; use {flag} or --diff, not both")
    cfg, rules, cache_dir = config_for(args)
    codes = [r["code"] for r in rules]
    selectable = [*BUILTIN_CODES, *codes]
    try:
        cli_select = split_codes(args.select) if args.select is not None else None
        cli_ignore = split_codes(args.ignore) if args.ignore is not None else None
        cli_extend = split_codes(args.extend_select or "")
        cli_extend_ignore = split_codes(args.extend_ignore or "")
        for flag, items in (("--select", cli_select), ("--ignore", cli_ignore),
                            ("--extend-select", cli_extend), ("--extend-ignore", cli_extend_ignore)):
            check_codes(items or [], selectable, flag)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    select = (cli_select if cli_select is not None else (cfg.select if cfg.select is not None else ["RSH"]))
    sel = Selection(select=select + cfg.extend_select + cli_extend,
                    ignore=(cli_ignore if cli_ignore is not None else cfg.ignore) + cli_extend_ignore)
    settings = rule_settings(rules, cfg, args)
    fix = args.fix or args.fix_only or (args.unsafe_fixes and not args.diff)
    unsafe = args.unsafe_fixes
    status_error = False
    rule_meta = {r["code"]: r for r in rules}

    # -- lint
    reports: list[FileReport]
    discovered: list[str] = []
    if use_stdin:
        from ..core.cache import content_hash

        name = args.stdin_filename or "<stdin>"
        raw = sys.stdin.buffer.read()
        rep = FileReport(name, raw=raw, digest=content_hash(raw))
        try:
            rep.diagnostics = lint_text(rep.source.text, name, settings)
            rep.noqa_unknown = noqa_unknown(rep.source.text, codes)
        except SourceError as exc:
            rep.error = decode_error(exc.reason)
        if not args.stdin_filename and rep.error is None:
            from .stdin_note import stdin_note

            note = stdin_note(rep.source.text, [os.getcwd(), cfg.root])
            if note:
                err(f"note: {note}")
        reports = [rep]
        cache = None
    else:
        excludes = cfg.excludes + [p for p in (args.extend_exclude or "").split(",") if p]
        files, missing = discover(paths, excludes, cfg.root)
        discovered = files
        cache = Cache(cache_dir, settings)
        show = sys.stderr.isatty() and len(files) >= PROGRESS_MIN_FILES and not args.quiet
        reports = lint_files(files, settings, cache, args.jobs or cpu_count(), codes,
                             _progress if show else None)
        if args.verbose:
            served = sum(r.cached for r in reports)
            analysed = sum(not r.cached and r.error is None for r in reports)
            _summary(f"reshard-lint: {len(reports)} file{'s' * (len(reports) != 1)} read, "
                     f"{served} served from the cache, {analysed} analysed.")
        # A path that does not exist is an RSH003 finding, as flake8 and ruff report it.
        reports += [FileReport(m, error=_missing_reason(m)) for m in missing]

    # -- filter, noqa, fix
    outcomes: list[FileOutcome] = []
    warnings: list[str] = []
    total_fixed = 0
    diffs: list[str] = []
    for rep in sorted(reports, key=lambda r: r.path):
        out = FileOutcome(rep)
        extra = per_file_ignored(rep.path, cfg.root, cfg.per_file_ignores)
        if rep.error is not None:
            # RSH003: there is no text, so no noqa and no fix; selection decides alone.
            out.kept = _filter([io_error_diagnostic(rep.error)], sel, extra)
            if not out.kept and not sel.named_off(IO_ERROR, extra):
                warnings.append(f"{rep.path}: {rep.error} (RSH003 is not selected)")
            outcomes.append(out)
            continue
        out.kept, out.silenced, out.lines = _post(rep, None, rep.diagnostics, sel, extra)
        for d in rep.diagnostics:
            if d.code == PARSE_ERROR and d not in out.kept and not sel.named_off(d.code, extra):
                warnings.append(f"{rep.path}:{d.line}: {d.message} (RSH001 is not selected)")
        for line, code in rep.noqa_unknown:
            warnings.append(f"{rep.path}:{line}: unknown code {code} in a noqa comment; "
                            f"known codes: {', '.join(codes)}")
        if (fix or args.diff) and any(d.fix is not None and (d.fix.safe or unsafe) for d in out.kept):
            src = rep.source
            reason = _fix_file(out, sel, extra, settings, unsafe)
            if reason is not None:
                err(f"{rep.path}: {reason}")
                status_error = True
            elif out.new_text is not None:
                if args.diff:
                    diffs.append(_unified_diff(rep.path, src.text, out.new_text))
                elif use_stdin:
                    pass  # written to standard output below
                else:
                    from ..core.writer import WriteError, write_fixed

                    try:
                        write_fixed(src, out.new_text)
                        total_fixed += out.fixed
                        # Not for a file that reads other project files: the entry would
                        # need their digests (runner.py takes them from the engine).
                        if cache is not None and not project_device_imports(out.new_text, rep.path)[1]:
                            from ..core.cache import content_hash
                            from ..core.sources import encode

                            cache.put(content_hash(encode(src, out.new_text)), out.new_diagnostics,
                                      rep.noqa_unknown)
                    except WriteError as exc:
                        err(f"{exc.path}: {exc.reason}")
                        status_error = True
                        out.new_text = None  # the file keeps its findings: report those
                        out.kept, out.silenced, out.lines = _post(rep, None, rep.diagnostics, sel, extra)
        # With --diff, out.kept holds what would remain after the fixes shown, as --fix
        # would leave the file; only the summary counts them (the diff is the output).
        outcomes.append(out)
    if cache is not None:
        cache.save()

    # -- output
    for w in warnings:
        err(f"warning: {w}")
    findings = sorted((Finding(o.report.path, d, o.lines) for o in outcomes for d in o.kept),
                      key=lambda f: f.sort_key)
    silenced = sorted((Finding(o.report.path, d, o.lines) for o in outcomes for d in o.silenced),
                      key=lambda f: f.sort_key)
    if any(f.diag.code == INTERNAL_ERROR for f in findings):
        status_error = True
    if use_stdin and fix:
        o = outcomes[0] if outcomes else None
        if o is not None:
            from ..core.sources import encode

            stdout.flush()
            if o.report.error is not None:
                sys.stdout.buffer.write(o.report.raw or b"")  # not text: handed back unchanged
            else:
                text = o.new_text if o.new_text is not None else o.report.source.text
                sys.stdout.buffer.write(encode(o.report.source, text))
            sys.stdout.buffer.flush()
            # The fixed source owns standard output; the remaining findings go to stderr.
            stdout = sys.stderr
        total_fixed = o.fixed if o is not None else 0
    if args.diff:
        for unified in diffs:
            stdout.write(unified)
    elif args.fix_only:
        # What remains is another run's to report (the pre-commit lint hook's); an internal
        # error, the reason for status 2, is said all the same.
        formatter(args.format)([f for f in findings if f.diag.code == INTERNAL_ERROR], rule_meta, stdout)
    else:
        formatter(args.format)(findings, rule_meta, stdout)
        if args.show_noqa and silenced:
            if args.format in ("text", "concise"):
                from .formats.text import header

                stdout.write("\n" if findings and args.format == "text" else "")
                for f in silenced:
                    stdout.write(f"{header(f)}  [silenced by noqa]\n")
            else:
                err("--show-noqa lists silenced findings only with --format text or concise")
    stdout.flush()

    # -- summary and status
    # Every finding printed counts, RSH001 and RSH003 included (RSH002 also sets status 2).
    n = len(findings)
    unchecked = sorted({f.path for f in findings if f.diag.code in ERROR_CODES})
    not_checked = {r.path for r in reports if r.error is not None
                   or any(d.code in ERROR_CODES for d in r.diagnostics)}
    if not args.quiet:
        # Findings left whose only fix is unsafe: --fix and --diff without --unsafe-fixes say so.
        left = 0 if unsafe else sum(1 for f in findings if f.diag.fix is not None and not f.diag.fix.safe)
        left_s = f"; {left} with {'an unsafe fix' if left == 1 else 'unsafe fixes'}, left for --unsafe-fixes" \
            if left else ""
        if args.fix_only:
            # Nothing when nothing changed: a pre-commit batch that fixed nothing stays silent.
            changed = sum(1 for o in outcomes if o.fixed)
            if total_fixed:
                _summary(f"Fixed {total_fixed} in {changed} file{'s' * (changed != 1)}.")
        elif fix:
            _summary(f"Fixed {total_fixed}, {n} remaining{left_s}.")
        elif args.diff:
            # n counts what the files would hold after the fixes shown: what --fix leaves.
            changed = len(diffs)
            if changed:
                would = sum(o.fixed for o in outcomes)
                _summary(f"Would fix {would} in {changed} file{'s' * (changed != 1)}; {n} would remain{left_s}.")
            else:
                none = "No safe fixes to apply" if left else "No fixes to apply"
                _summary(f"{none}; {n} finding{'s' * (n != 1)} remain{'s' * (n == 1)}{left_s}."
                         if n else f"{none}.")
        elif args.format in ("text", "concise"):
            safe = sum(1 for f in findings if f.diag.fix is not None and f.diag.fix.safe)
            uns = sum(1 for f in findings if f.diag.fix is not None and not f.diag.fix.safe)
            n_files = len({f.path for f in findings})
            extra_s = []
            if safe:
                extra_s.append(f"{safe} fixable with --fix")
            if uns:
                extra_s.append(f"{uns} with --unsafe-fixes")
            tail = f" ({', '.join(extra_s)})" if extra_s else ""
            checked = len(reports) - len(not_checked)
            of = f" of {len(reports)}" if checked != len(reports) else ""
            if n:
                _summary(f"Found {n} finding{'s' * (n != 1)} in {n_files} file{'s' * (n_files != 1)} "
                         f"({checked}{of} checked){tail}.")
            else:
                _summary(f"No findings in {checked} file{'s' * (checked != 1)}.")
                _summary(_unresolved_line(args, discovered, settings, reports))
            if silenced and not args.show_noqa:
                _summary(f"{len(silenced)} silenced by noqa (--show-noqa lists them).")
        if unchecked:
            k = len(unchecked)
            _summary(f"{k} file{'s' * (k != 1)} could not be checked (see above): {', '.join(unchecked[:5])}"
                     + (" ..." if k > 5 else ""))
    if status_error:
        return 2
    if args.exit_zero or args.fix_only:
        return 0
    if args.diff:
        return 1 if diffs or n else 0
    return 1 if n else 0


def _unresolved_line(args: argparse.Namespace, files: Sequence[str], settings: dict[str, object],
                     reports: Sequence[FileReport]) -> str:
    """The line after "No findings": silence is not proof, and `coverage` says where the
    analysis could not see. Check's own run does not hold the count (the gate and the cache
    skip most files unanalysed), so the count is `coverage`'s second analysis, with -v only:
    2.9 s against check's 0.6 s on jax's 617 installed files (2 cores)."""
    if not args.verbose:
        return ("reshard-lint coverage lists the transfer sites the analysis could not resolve "
                "(-v counts them here).")
    from .coverage import collect, file_coverage

    if files:
        sites = collect(files, settings, args.jobs or cpu_count()).sites
    else:  # standard input
        rep = reports[0] if reports else None
        sites = file_coverage(rep.source.text, rep.path, settings).sites \
            if rep is not None and rep.error is None else []
    k = sum(1 for site in sites if site.verdict == "unresolved")
    return (f"{k} of {len(sites)} transfer site{'s' * (len(sites) != 1)} could not be resolved "
            f"(reshard-lint coverage lists them).")


_last_progress = 0.0


def _progress(done: int, total: int) -> None:
    global _last_progress
    now = time.monotonic()
    if done != total and now - _last_progress < 0.1:
        return  # every file is counted, a few writes a second are shown
    _last_progress = now
    sys.stderr.write(f"\rreshard-lint: analysed {done}/{total} files")
    if done == total:
        sys.stderr.write("\r\x1b[K")  # leave the terminal line clean for the report
    sys.stderr.flush()


# ---------------------------------------------------------------------------- rule


def cmd_rule(args: argparse.Namespace, stdout: TextIO) -> int:
    from ..rules import all_rules, rule_by_code

    if args.all:
        rows = [("CODE", "NAME", "FIX", "SUMMARY")]
        fix = {"safe": "safe", "unsafe": "unsafe", "none": "-"}
        rows += [(r.code, r.name, fix[r.fix_safety], r.summary) for r in all_rules()]
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        w2 = max(len(r[2]) for r in rows)
        for r in rows:
            stdout.write(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]:<{w2}}  {r[3]}\n")
        return 0
    if not args.code:
        raise UsageError("rule: give a code (reshard-lint rule RSH201) or --all")
    rule = rule_by_code(args.code.upper())
    if rule is None:
        raise UsageError(f"unknown rule {args.code}; known: {', '.join(r.code for r in all_rules())}")
    from ..rules.docs import rule_doc

    stdout.write(rule_doc(rule))
    return 0


# ---------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reshard-lint",
        description="Static analysis for JAX meshes, shardings and cross-host reshards.",
        epilog="Exit status: 0 clean, 1 findings, 2 usage, configuration or internal error.")
    parser.add_argument("--version", action="version", version=f"reshard-lint {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="lint files and directories",
                       description="Lint Python files; directories are searched recursively.")
    c.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or directories (default: .); - reads stdin")
    g = c.add_argument_group("selection")
    g.add_argument("--select", metavar="CODES", help="codes or prefixes to report (replaces the config's)")
    g.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to add to the selection")
    g.add_argument("--ignore", metavar="CODES",
                   help="codes or prefixes not to report (replaces the config's)")
    g.add_argument("--extend-ignore", metavar="CODES", help="codes or prefixes to add to ignore")
    g.add_argument("--show-noqa", action="store_true", help="also list findings silenced by # noqa")
    g.add_argument("--runtime", choices=RUNTIMES,
                   help="where the programs run: auto (default: per file, one process or Pathways' "
                        "proxy backend means single-controller), multi-controller, single-controller "
                        "(docs/runtimes.md)")
    g.add_argument("--platforms", metavar="LIST",
                   help="where the programs may run, comma-separated: tpu,gpu,cpu (default: all "
                        "three); device order differs by platform (docs/platforms.md)")
    f = c.add_argument_group("fixes")
    f.add_argument("--fix", action="store_true", help="apply safe fixes")
    f.add_argument("--unsafe-fixes", action="store_true",
                   help="also apply unsafe fixes (implies --fix unless --diff is given)")
    f.add_argument("--fix-only", action="store_true",
                   help="apply safe fixes (with --unsafe-fixes, unsafe ones too) and report nothing of what "
                        "remains: no findings, exit 0 unless an error; 'Fixed N in K files.' on stderr when "
                        "it changed a file (the pre-commit fix hook)")
    f.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    o = c.add_argument_group("output")
    o.add_argument("--format", choices=("text", "concise", "json", "sarif", "github"), default="text",
                   help="how findings are printed: text (default: each with its source line, notes "
                        "and fix), concise (one line each), json, sarif (SARIF 2.1.0), github "
                        "(workflow annotations); docs/output-formats.md")
    o.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    o.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    o.add_argument("-v", "--verbose", action="store_true",
                   help="also say on stderr how many files the cache served and how many were analysed")
    s = c.add_argument_group("files and configuration")
    s.add_argument("--stdin-filename", metavar="NAME",
                   help="the file name to report for -, and its place in the project (its imports are followed)")
    s.add_argument("--config", metavar="FILE", help="read settings from this pyproject.toml")
    s.add_argument("--isolated", action="store_true", help="ignore configuration files")
    s.add_argument("--extend-exclude", metavar="GLOBS", help="more paths or names to skip (comma-separated)")
    p = c.add_argument_group("speed")
    p.add_argument("-j", "--jobs", type=_positive, default=0, metavar="N",
                   help="worker processes (default: all cores)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="result cache (default: .reshard-lint-cache at the root)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")

    from .coverage import add_parser as add_coverage

    add_coverage(sub)

    from .explain.command import add_parser as add_explain

    add_explain(sub)

    r = sub.add_parser("rule", help="print a rule's documentation, or --all for the list")
    r.add_argument("code", nargs="?")
    r.add_argument("--all", action="store_true", help="a table of every rule")

    # Listed for --help only: `reshard-lint lsp ...` is handed to reshard_lint.frontends.lsp before parsing.
    sub.add_parser("lsp", help="run the language server on standard input/output (see lsp --help)")
    return parser


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _run(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["lsp"]:
        # The language server parses its own options (--stdio, --log-file ...).
        from . import lsp as lsp_module

        return int(lsp_module.main(args_list[1:]) or 0)
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(args_list)
        if unknown:
            # argparse leaves them to the top-level parser, whose usage does not name the
            # subcommand's options: the subcommand's own usage does.
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            before = args_list[:args_list.index(args.command)]
            (parser if unknown[0] in before else sub.choices[args.command]).error(
                f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:
        return int(exc.code or 0)
    stdout = sys.stdout
    try:
        if args.command == "check":
            return cmd_check(args, stdout)
        if args.command == "coverage":
            from .coverage import cmd_coverage

            return cmd_coverage(args, stdout)
        if args.command == "explain":
            from .explain.command import cmd_explain

            return cmd_explain(args, stdout)
        return cmd_rule(args, stdout)
    except (UsageError, ConfigError) as exc:
        err(str(exc))
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(argv)
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, and keep Python from complaining
        # again when it flushes stdout at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a crash of the command itself is status 2, not 1
        import traceback

        traceback.print_exc()
        err(f"internal error: {type(exc).__name__}: {exc}; please report it with the traceback above")
        return 2


if __name__ == "__main__":
    sys.exit(main())
