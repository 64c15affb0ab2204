"""Run flake8 with only the plugins a benchmark command asks for.

flake8 runs every installed checker plugin whatever ``--select`` says; ``--select``
only filters what gets reported. So in an environment where reshard-lint and TorchFix
are installed, ``flake8 --select=F`` would still pay for RSH and TOR, and the
baseline would not be a baseline. This launcher keeps flake8's own plugins (pyflakes,
pycodestyle, mccabe: what every flake8 user runs) plus the plugins named with
``--keep``, and drops every other third-party checker before flake8 loads them.

Usage: python bench/flake8_plugins.py [--keep RSH[,TOR]] -- <flake8 arguments>
"""

from __future__ import annotations

import multiprocessing
import sys
from typing import Iterator

# Plugins that come with flake8 itself; a user cannot run flake8 without them.
BUILTIN_PACKAGES = frozenset({"flake8", "pyflakes", "pycodestyle", "mccabe"})


def _split_argv(argv: list[str]) -> tuple[frozenset[str], list[str]]:
    keep: set[str] = set()
    rest = list(argv)
    while rest and rest[0] != "--":
        arg = rest.pop(0)
        if arg == "--keep" and rest:
            keep.update(x for x in rest.pop(0).split(",") if x)
        elif arg.startswith("--keep="):
            keep.update(x for x in arg.split("=", 1)[1].split(",") if x)
        else:
            raise SystemExit(f"flake8_plugins.py: unknown option {arg!r} (flake8 arguments go after --)")
    if rest and rest[0] == "--":
        rest.pop(0)
    return frozenset(keep), rest


def main(argv: list[str] | None = None) -> int:
    keep, flake8_argv = _split_argv(list(sys.argv[1:] if argv is None else argv))

    from flake8.plugins import finder

    original = finder._find_importlib_plugins

    def wanted() -> Iterator[finder.Plugin]:
        for plugin in original():
            if (
                plugin.package in BUILTIN_PACKAGES
                or plugin.entry_point.group == "flake8.report"
                or plugin.entry_point.name in keep
            ):
                yield plugin

    finder._find_importlib_plugins = wanted  # type: ignore[assignment]

    # flake8 -jN workers inherit the filtered plugin list only when forked; under
    # spawn/forkserver they would re-discover every installed plugin.
    multiprocessing.set_start_method("fork", force=True)

    from flake8.main.cli import main as flake8_main

    return flake8_main(flake8_argv)


if __name__ == "__main__":
    sys.exit(main())
