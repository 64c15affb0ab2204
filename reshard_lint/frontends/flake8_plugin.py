"""The flake8 entry point: a plain checker class, as flake8-bugbear's."""

from __future__ import annotations

import ast
import os
from typing import Any, Iterator

from flake8.exceptions import ExecutionError

from .. import __version__
from ..core.collector import paused_keeping


class ReshardChecker:
    name = "reshard-lint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str = "(none)", lines: list[str] | None = None) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    _runtime: str | None = None  # from flake8's options; None: the project's pyproject.toml
    _platforms: tuple[str, ...] | None = None
    _per_file_runtime: tuple[tuple[str, str, str], ...] | None = None

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_option(
            "--reshard-runtime", default=None, parse_from_config=True,
            choices=["auto", "multi-controller", "single-controller"],
            help="where the programs run (docs/runtimes.md); default: runtime in the project's "
                 "[tool.reshard-lint], else auto",
        )
        parser.add_option(
            "--reshard-per-file-runtime", default=None, parse_from_config=True,
            help="where the programs of some paths run, as per-file-ignores: glob:runtime pairs "
                 "(tests/*:single-controller docs/*.py:single-controller), globs relative to the "
                 "current directory; default: per-file-runtime in the project's [tool.reshard-lint]",
        )
        parser.add_option(
            "--reshard-platforms", default=None, parse_from_config=True, comma_separated_list=True,
            help="where the programs may run, comma-separated: tpu,gpu,cpu (docs/platforms.md); "
                 "default: platforms in the project's [tool.reshard-lint], else all three",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        value = getattr(options, "reshard_runtime", None)
        if value is not None and value not in ("auto", "multi-controller", "single-controller"):
            # flake8 checks `choices` on the command line only, not in setup.cfg/tox.ini/.flake8;
            # a typo there must not silently turn the option off.
            raise ExecutionError(f"reshard-lint: reshard-runtime = {value!r} in the [flake8] configuration "
                                 "must be one of 'auto', 'multi-controller', 'single-controller'")
        cls._runtime = value
        table = getattr(options, "reshard_per_file_runtime", None)
        cls._per_file_runtime = None
        if table is not None:
            from ..core.config import ConfigError, parse_per_file_runtime

            try:
                cls._per_file_runtime = parse_per_file_runtime(str(table), os.getcwd(), "reshard-per-file-runtime")
            except ConfigError as exc:
                raise ExecutionError(f"reshard-lint: {exc} (in the [flake8] configuration or the command line)") \
                    from None
        platforms = getattr(options, "reshard_platforms", None)
        if platforms:
            from ..core.config import ConfigError, check_platforms

            try:
                cls._platforms = check_platforms(platforms, "reshard-platforms")
            except ConfigError as exc:
                raise ExecutionError(f"reshard-lint: {exc}") from None
        else:
            cls._platforms = None
        # The projects of the paths given: a broken [tool.reshard-lint] stops the run here,
        # with the message `reshard-lint check` prints, even when no file gets to the engine.
        for path in getattr(options, "filenames", None) or ["."]:
            _directory_settings(os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or "."))
        from .preload import before_workers

        before_workers(options)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            source = "".join(self.lines) if self.lines is not None else _read(self.filename)
            # The gate needs only the ast flake8 already parsed; the rules and the
            # analysis are imported in the few processes that get a file past it.
            from ..core.config import LIBRARY_KEYS
            from ..engine.engine import check_source
            from ..project.projects import device_imports, may_import_devices

            # Meshes imported from the project's other modules (read from disk), asked only
            # where the text places an array: the project's settings cost a file read.
            project = None
            imported: frozenset[str] = frozenset()
            if may_import_devices(source):
                project = _project_settings(self.filename)
                imported = device_imports(source, self.filename, project)[0]

            def settings() -> dict[str, Any]:  # read once a file gets to the analysis
                found = project or _project_settings(self.filename)
                table = self._per_file_runtime if self._per_file_runtime is not None else \
                    found.get("per-file-runtime")
                return {"runtime": self._runtime or found["runtime"],
                        "platforms": self._platforms or found["platforms"],
                        **({"src": found["src"]} if "src" in found else {}),
                        **({"per-file-runtime": table} if table else {}),
                        **{k: found[k] for k in LIBRARY_KEYS if k in found}}

            # collector.py: no collections while the engine builds its tree, and the
            # summaries of imported modules, kept for later files, frozen after
            diags = check_source(source, self.filename, settings, tree=self.tree, imported=imported,
                                 pause=paused_keeping).diagnostics
        except ExecutionError:
            raise  # broken settings (_directory_settings): flake8 stops with the message
        except Exception as exc:  # noqa: BLE001 - never abort the user's flake8 run for a bug of ours
            yield 1, 0, f"RSH002 internal error in reshard-lint: {type(exc).__name__}: {exc}", type(self)
            return
        for d in diags:
            yield d.line, d.col, f"{d.code} {d.message}", type(self)


_PROJECT_SETTINGS: dict[str, dict[str, Any]] = {}
_RULE_TABLE: list[dict[str, Any]] | None = None


def _project_settings(filename: str) -> dict[str, Any]:
    """``runtime``, ``per-file-runtime``, ``platforms`` and ``src`` of the file's
    [tool.reshard-lint], as ``reshard-lint check`` reads them. A broken configuration stops
    flake8 (ExecutionError: "There was a critical error ...") with the message the command
    prints; it never means the defaults.
    """
    return _directory_settings(os.path.dirname(os.path.abspath(filename)))


def _directory_settings(directory: str) -> dict[str, Any]:
    from ..core.config import LIBRARY_KEYS, PLATFORMS, ConfigError, find_project, load

    hit = _PROJECT_SETTINGS.get(directory)
    if hit is None:
        global _RULE_TABLE
        hit = {"runtime": "auto", "platforms": PLATFORMS}
        path, root = find_project(directory)
        try:
            if path and _RULE_TABLE is None:
                from ..engine.runner import BUILTIN_CODES, rule_table

                # once per process, not once per directory; RSH001-RSH003 as the command names them
                _RULE_TABLE = [*BUILTIN_CODES.values(), *rule_table(None)]
            options = load(path, _RULE_TABLE or [], root).options if path else {}
        except ConfigError as exc:
            raise ExecutionError(f"reshard-lint: {exc}") from None
        hit.update({k: options[k] for k in ("runtime", "platforms", "src", "per-file-runtime", *LIBRARY_KEYS)
                    if k in options})
        _PROJECT_SETTINGS[directory] = hit
    return hit


def _read(filename: str) -> str:
    with open(filename, encoding="utf-8") as fh:
        return fh.read()
