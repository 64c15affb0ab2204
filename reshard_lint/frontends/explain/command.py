"""``reshard-lint explain FILE:LINE``: pictures of the meshes behind a diagnostic.

Exit status, in the command's conventions (cli.py): 0 a picture was drawn; 1 there is
nothing to draw at that line (no diagnostic, devices the analysis does not know, a file
that does not parse), said on stderr; 2 a usage or configuration error (no such file, a
line the file does not have, an ``--output`` that is neither .svg nor .html).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from typing import Any, TextIO

from ...core.config import RUNTIMES

_LOCATION = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::\d+)?:?$")
DEFAULT_COLUMNS = 100  # when stdout is not a terminal: stable output for pipes and tests


def add_parser(sub: Any) -> None:
    c = sub.add_parser(
        "explain", help="draw the meshes behind a diagnostic as grids of device ids",
        description="Draw the meshes of the diagnostic at FILE:LINE as grids of device ids, per "
                    "target platform: a move's source and target with the devices whose shard moves "
                    "marked, a construction beside the natural order, a placement with the devices "
                    "each process owns. Exit status: 0 drawn, 1 nothing to draw at that line, "
                    "2 usage or configuration error.")
    c.add_argument("location", metavar="FILE:LINE",
                   help="a diagnostic's place, as check prints it (FILE:LINE or FILE:LINE:COL)")
    c.add_argument("-o", "--output", metavar="FILE",
                   help="write the picture to FILE instead: .svg (one drawing) or .html (a page)")
    c.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the terminal picture: auto (default) when stdout is a terminal "
                        "and NO_COLOR is not set")
    c.add_argument("--runtime", choices=RUNTIMES, help="where the program runs (as for check)")
    c.add_argument("--platforms", metavar="LIST",
                   help="target platforms, comma-separated: tpu,gpu,cpu (default: the configuration's)")
    c.add_argument("--config", metavar="FILE", help="read settings from this pyproject.toml")
    c.add_argument("--isolated", action="store_true", help="ignore configuration files")


def colour_wanted(choice: str, stream: TextIO) -> bool:
    """``auto``: a terminal, unless NO_COLOR is set to anything (no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def cmd_explain(args: argparse.Namespace, stdout: TextIO) -> int:
    from ..command_setup import UsageError, config_for, err, rule_settings
    from ...core.sources import read_bytes
    from ...core.sources import SourceError, decode
    from .gather import explain_source
    from .picture import page, svg
    from .text import render

    m = _LOCATION.match(args.location)
    if m is None:
        raise UsageError(f"explain: give a place as FILE:LINE (e.g. examples/train.py:58), "
                         f"not {args.location!r}")
    path, line = m.group("path"), int(m.group("line"))
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    kind = os.path.splitext(args.output or "")[1].lower()
    if args.output and kind not in (".svg", ".html", ".htm"):
        raise UsageError(f"--output {args.output}: write .svg or .html")
    try:
        text = decode(read_bytes(path), path).text
    except SourceError as exc:
        raise UsageError(str(exc)) from None
    lines = len(text.splitlines())
    if not 1 <= line <= max(lines, 1):
        raise UsageError(f"{path} has {lines} line{'s' * (lines != 1)}; there is no line {line}")
    args.paths, args.no_cache, args.cache_dir, args.stdin_filename = [path], True, None, None
    cfg, rules, _ = config_for(args)
    settings = rule_settings(rules, cfg, args)

    outcome = explain_source(text, path, line, settings)
    if outcome.error is not None:
        err(f"{path}: {outcome.error}; nothing to explain")
        return 1
    for code, at, why in outcome.undrawn:
        err(f"{path}:{at}: {code}: nothing to draw: {why}")
    if not outcome.explanations:
        if not outcome.undrawn:
            near = ", ".join(map(str, outcome.diagnostic_lines[:12])) or "none"
            err(f"{path}:{line}: no diagnostic on this line, so no meshes to draw "
                f"(lines with diagnostics: {near})")
        return 1
    if args.output:
        content = svg(outcome.explanations) if kind == ".svg" else page(
            outcome.explanations, f"reshard-lint explain {path}:{line}")
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(content)
        except OSError as exc:
            raise UsageError(f"--output {args.output}: {exc.strerror or exc}") from None
        print(f"reshard-lint: wrote {args.output}", file=sys.stderr)
        return 0
    colour = colour_wanted(args.color, stdout)
    isatty = getattr(stdout, "isatty", None)
    columns = shutil.get_terminal_size((DEFAULT_COLUMNS, 24)).columns if isatty and isatty() \
        else DEFAULT_COLUMNS
    stdout.write(render(outcome.explanations, max(60, columns), colour))
    return 0
