"""What the language server computes for a document, apart from the protocol: the
settings (the editor's, completed from the project's pyproject.toml) and the analysis of
one version of the text (engine.check_source, with noqa and select/ignore).
Nothing here needs pygls; lsp.py serves it, explain/hover.py draws from it."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..core.collector import paused
from ..core.config import LIBRARY_KEYS, RUNTIMES
from ..core.diagnostic import Diagnostic
from ..engine.engine import PARSE_ERROR, check_source, engine_for
from ..core.fixes import split_lines

# Long enough to fold a burst of keystrokes into one analysis, short enough that the
# time from a change to its diagnostics stays under 400 ms on a 2,000-line file
# (bench/run.py measures it).
DEFAULT_DEBOUNCE = 0.05


log = logging.getLogger("reshard_lint.lsp")


@dataclass(frozen=True)
class Settings:
    runtime: str = "auto"
    select: tuple[str, ...] = ("RSH",)
    ignore: tuple[str, ...] = ()
    debounce: float = DEFAULT_DEBOUNCE
    platforms: tuple[str, ...] = ("tpu", "gpu", "cpu")
    # (glob, runtime, the directory the glob is relative to: "" until the project's root is known)
    per_file_runtime: tuple[tuple[str, str, str], ...] = ()
    # Keys the editor sent: those override the project's [tool.reshard-lint], the rest
    # come from it, so the editor shows what `reshard-lint check` reports.
    explicit: frozenset[str] = frozenset()
    # The project's library-objects and library-kinds (JSON text, core/config.py).
    library: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_options(cls, options: Any, base: Settings | None = None) -> Settings:
        base = base or cls()
        if not isinstance(options, Mapping):
            return base
        # Clients differ: some send {"reshard-lint": {...}}, some the section's content.
        section = options.get("reshard-lint", options.get("reshard_lint", options))
        if not isinstance(section, Mapping):
            return base
        mc = section.get("runtime", base.runtime)
        if mc not in RUNTIMES:
            mc = base.runtime

        def codes(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
            value = section.get(key)
            if isinstance(value, str):
                value = [v for v in value.replace(" ", ",").split(",") if v]
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return tuple(v.strip().upper() for v in value)
            return default

        debounce = section.get("debounce", base.debounce)
        if not isinstance(debounce, (int, float)) or debounce < 0:
            debounce = base.debounce
        platforms = base.platforms
        given = section.get("platforms")
        if isinstance(given, str):
            given = given.split(",")
        if isinstance(given, (list, tuple)) and all(isinstance(v, str) for v in given):
            from ..core.config import ConfigError, check_platforms

            try:
                platforms = check_platforms(given, "platforms")
            except ConfigError as exc:
                log.warning("ignoring the editor's setting: %s", exc)
        table = base.per_file_runtime
        given_table = section.get("per-file-runtime", section.get("per_file_runtime"))
        if isinstance(given_table, Mapping):
            from ..core.config import ConfigError, check_runtime

            try:
                table = tuple((str(g), check_runtime(r, f"per-file-runtime {g!r}"), "") for g, r in given_table.items())
            except ConfigError as exc:
                log.warning("ignoring the editor's setting: %s", exc)
        explicit = base.explicit | {k for k in ("select", "ignore", "runtime", "platforms") if k in section}
        if isinstance(given_table, Mapping):
            explicit |= {"per-file-runtime"}
        return cls(str(mc), codes("select", base.select), codes("ignore", base.ignore), float(debounce),
                   platforms, table, frozenset(explicit))

    def engine_settings(self) -> dict[str, object]:
        """What the engine reads of them (the project's completed by project_settings)."""
        out: dict[str, object] = {"runtime": self.runtime, "platforms": self.platforms}
        if self.per_file_runtime:
            out["per-file-runtime"] = self.per_file_runtime
        out.update(self.library)
        return out

    def selects(self, code: str) -> bool:
        return any(code.startswith(s) for s in self.select) and \
            not any(code.startswith(i) for i in self.ignore)


@dataclass(frozen=True)
class Analysis:
    source: str
    lines: list[str]
    diagnostics: list[Diagnostic]  # after noqa and select/ignore
    broken: bool  # did not parse; diagnostics is empty then
    settings: Settings  # what it was made with: a result from before a settings change is stale
    # The project modules it read (path -> digest): an edit of one makes it stale.
    deps: Mapping[str, str] = field(default_factory=dict)


def project_settings(path: str, settings: Settings) -> tuple[Settings, list[str]]:
    """The editor's settings completed from the file's pyproject.toml, and its per-file ignores.

    A broken configuration is the command line's to report (exit 2); the editor keeps
    linting with its own settings rather than going blank.
    """
    from ..core.config import ConfigError, find_project, load
    from ..engine.runner import per_file_ignored, rule_table

    cfg_path, root = find_project(path)
    if cfg_path is None:
        return replace(settings, per_file_runtime=_rooted(settings.per_file_runtime, root)), []
    try:
        key = (cfg_path, os.stat(cfg_path).st_mtime_ns)
        cfg = _CONFIGS.get(key)
        if cfg is None:
            cfg = _CONFIGS[key] = load(cfg_path, rule_table(None), root)
    except (ConfigError, OSError) as exc:
        log.warning("ignoring %s: %s", cfg_path, exc)
        return settings, []
    select = settings.select if "select" in settings.explicit else \
        tuple(cfg.select if cfg.select is not None else ["RSH"]) + tuple(cfg.extend_select)
    ignore = settings.ignore if "ignore" in settings.explicit else tuple(cfg.ignore)
    mc = settings.runtime if "runtime" in settings.explicit else \
        str(cfg.options.get("runtime", settings.runtime))
    platforms = settings.platforms if "platforms" in settings.explicit else \
        tuple(cfg.options.get("platforms", settings.platforms))  # type: ignore[arg-type]
    table = _rooted(settings.per_file_runtime, cfg.root) if "per-file-runtime" in settings.explicit else \
        tuple(cfg.options.get("per-file-runtime", ()))  # type: ignore[arg-type]  # (config.PerFileRuntime)
    library = tuple((k, str(cfg.options[k])) for k in LIBRARY_KEYS if k in cfg.options)
    merged = Settings(mc, tuple(select), tuple(ignore), settings.debounce, platforms, table, settings.explicit,
                      library)
    return merged, per_file_ignored(path, cfg.root, cfg.per_file_ignores)


def _rooted(table: tuple[tuple[str, str, str], ...], root: str) -> tuple[tuple[str, str, str], ...]:
    """The editor's globs, relative to the project's root."""
    return tuple((glob, runtime, where or root) for glob, runtime, where in table)


_CONFIGS: dict[tuple[str, int], Any] = {}


def analyse(source: str, path: str, settings: Settings,
            cancelled: Callable[[], bool] | None = None,
            unsaved: Callable[[str], str | None] | None = None) -> Analysis:
    """``cancelled`` says when a newer version made this analysis useless (it then raises
    engine.Cancelled at the engine's next stage); ``unsaved``: the editor's text of another
    file of the project, when it is open (imported modules are read from there first)."""
    asked = settings
    settings, per_file = project_settings(path, settings)
    engine = engine_for(settings.engine_settings())
    if unsaved is not None:
        engine.projects.unsaved = unsaved
    lines = split_lines(source)
    # collector.py: a full collection would rescan the file's tree mid-analysis
    result = check_source(source, path, engine=engine, pause=paused, cancelled=cancelled,
                          select=lambda code: settings.selects(code) and not any(
                              code.startswith(c) for c in per_file))
    if result.error_code == PARSE_ERROR:
        return Analysis(source, lines, [], True, asked, result.deps)
    return Analysis(source, lines, result.diagnostics, False, asked, result.deps)
