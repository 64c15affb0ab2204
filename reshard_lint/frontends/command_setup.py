"""What the subcommands (check, coverage, explain) share: reading the configuration and
the rules' settings from their arguments, and telling the user about a mistake."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..core.config import PLATFORMS, Config, ConfigError, check_platforms, find_project, load
from ..engine.runner import BUILTIN_CODES, rule_table


class UsageError(Exception):
    pass


def err(msg: str) -> None:
    print(f"reshard-lint: {msg}", file=sys.stderr)


def rule_settings(rules: list[dict[str, Any]], cfg: Config, args: argparse.Namespace) -> dict[str, object]:
    settings: dict[str, object] = {}
    for r in rules:
        for o in r.get("options", ()):
            settings[o["name"]] = o["default"]
    settings.update(cfg.options)
    settings.setdefault("runtime", "auto")
    if getattr(args, "runtime", None):
        settings["runtime"] = args.runtime
    if getattr(args, "platforms", None):
        settings["platforms"] = check_platforms(args.platforms.split(","), "--platforms")
    settings.setdefault("platforms", PLATFORMS)
    return settings


def config_for(args: argparse.Namespace) -> tuple[Config, list[dict[str, Any]], str | None]:
    """(config, rule table, cache dir). The rule table comes from the cache when it can."""
    start = next((p for p in args.paths if p != "-"), None) or (
        os.path.dirname(args.stdin_filename) if args.stdin_filename else None) or "."
    if args.config:
        if not os.path.isfile(args.config):
            raise ConfigError(f"{args.config}: no such configuration file")
        path: str | None = args.config
        root = os.path.dirname(os.path.abspath(args.config))
    elif args.isolated:
        path, root = None, os.getcwd()
    else:
        path, root = find_project(start)
    cache_dir = None
    if not args.no_cache:
        cache_dir = args.cache_dir or os.environ.get("RESHARD_LINT_CACHE_DIR") or \
            os.path.join(root, ".reshard-lint-cache")
    rules = rule_table(cache_dir)
    # RSH001-RSH003 may be named in select, ignore and per-file-ignores like a rule's code.
    cfg = load(path, [*BUILTIN_CODES.values(), *rules], root)
    return cfg, rules, cache_dir


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
