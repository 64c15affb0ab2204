"""The standalone command: ``reshard-lint check PATHS``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Iterator, Sequence

from . import __version__, noqa
from .engine import Engine
from .fixes import split_lines
from .rules import all_rules, rule_by_code

_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", "build", "dist", ".venv", "venv",
              ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".eggs"}


def iter_files(paths: Sequence[str]) -> Iterator[str]:
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")
                                 and not os.path.exists(os.path.join(root, d, "pyvenv.cfg")))
                for f in sorted(files):
                    if f.endswith(".py"):
                        yield os.path.join(root, f)
        else:
            yield p


def selected(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    if code in ("RSH001", "RSH002"):
        return True
    return any(code.startswith(s) for s in select) and not any(code.startswith(i) for i in ignore)


def cmd_check(args: argparse.Namespace) -> int:
    engine = Engine()
    select = args.select.split(",") if args.select else ["RSH"]
    ignore = args.ignore.split(",") if args.ignore else []
    found = 0
    for path in iter_files(args.paths or ["."]):
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            source = raw.decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"{path}: cannot read: {exc}", file=sys.stderr)
            continue
        result = engine.lint_source(source, path)
        kept, _ = noqa.split(result.diagnostics, split_lines(source))
        for d in kept:
            if not selected(d.code, select, ignore):
                continue
            found += 1
            print(f"{path}:{d.line}:{d.col + 1}: {d.code} {d.message}")
    return 1 if found else 0


def cmd_rule(args: argparse.Namespace) -> int:
    rule = rule_by_code(args.code.upper())
    if rule is None:
        print(f"reshard-lint: unknown rule {args.code}; known: {', '.join(r.code for r in all_rules())}",
              file=sys.stderr)
        return 2
    from .docs import rule_doc

    print(rule_doc(rule))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reshard-lint", description=__doc__)
    parser.add_argument("--version", action="version", version=f"reshard-lint {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="lint files and directories")
    check.add_argument("paths", nargs="*")
    check.add_argument("--select", default="")
    check.add_argument("--ignore", default="")
    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.command == "check":
        return cmd_check(args)
    return cmd_rule(args)


if __name__ == "__main__":
    sys.exit(main())
