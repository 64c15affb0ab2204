"""``[tool.reshard-lint]`` in pyproject.toml: finding, reading and checking it.

Every mistake (broken TOML, unknown key, wrong type, unknown code, bad option value)
becomes one ``ConfigError`` naming the file, the key and what is allowed; the command
prints it and exits 2. A silently ignored setting is worse than a failed run in CI.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

SECTION = "tool.reshard-lint"

# Directory names never descended into unless ``exclude`` replaces this list.
# Virtual environments are also recognised by their pyvenv.cfg, whatever their name.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git", ".hg", ".svn", "__pycache__", "node_modules", "build", "dist", ".venv", "venv",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".eggs", ".reshard-lint-cache", "*.egg-info",
)

LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")
# Where the project's programs run (docs/runtimes.md); "auto" decides per file.
RUNTIMES = ("auto", "multi-controller", "single-controller")
# Where the programs may run: device order differs by platform (docs/platforms.md).
PLATFORMS = ("tpu", "gpu", "cpu")


class ConfigError(Exception):
    """A setting that cannot be used; the message is complete and user-facing."""


@dataclass
class Config:
    path: str | None = None  # the pyproject.toml read, if any
    root: str = "."  # the project root: the config's directory, else the cwd
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, object] = field(default_factory=dict)  # runtime, and rule options

    @property
    def excludes(self) -> list[str]:
        base = list(DEFAULT_EXCLUDE) if self.exclude is None else list(self.exclude)
        return base + list(self.extend_exclude)


def find_project(start: str) -> tuple[str | None, str]:
    """(the nearest pyproject.toml with a [tool.reshard-lint] table or None, project root).

    A pyproject.toml without our table does not stop the walk (a monorepo member's
    build metadata should not hide the repository's lint settings). The root, where
    the cache lives, is the config's directory, else the nearest directory with a
    pyproject.toml or .git, else ``start``.
    """
    d = os.path.abspath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    first_root: str | None = None
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate):
            first_root = first_root or d
            try:
                with open(candidate, "rb") as fh:
                    text = fh.read()
            except OSError:
                text = b""
            if b"[tool.reshard-lint" in text or b'"reshard-lint"' in text and b"[tool" in text:
                return candidate, d
        elif first_root is None and os.path.isdir(os.path.join(d, ".git")):
            first_root = d
        parent = os.path.dirname(d)
        if parent == d:
            return None, first_root or os.path.abspath(start if os.path.isdir(start) else ".")
        d = parent


def load(path: str | None, rules: Sequence[Mapping[str, Any]], root: str | None = None) -> Config:
    """Read and check ``path`` (None: defaults). ``rules`` is the rule table (code, options)."""
    if path is None:
        return Config(root=root or os.getcwd())
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("reshard-lint") if isinstance(data.get("tool"), dict) else None
    cfg = Config(path=path, root=os.path.dirname(os.path.abspath(path)))
    if table is None:
        return cfg
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{SECTION}] must be a table")
    codes = [r["code"] for r in rules]
    options = {o["name"]: o for r in rules for o in r.get("options", ())}
    allowed = list(LIST_KEYS) + ["library-kinds", "library-objects", "per-file-ignores", "per-file-runtime",
                                 "platforms", "runtime", "src"] + \
        sorted(options)
    for key, value in table.items():
        where = f"{path}: [{SECTION}] {key}"
        if key in LIST_KEYS:
            items = _str_list(value, where)
            if key in ("select", "ignore", "extend-select"):
                check_codes(items, codes, where)
            setattr(cfg, key.replace("-", "_"), items)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f'{where} must be a table of glob = ["RSH201", ...], e.g. '
                                  '[tool.reshard-lint.per-file-ignores] "tests/*" = ["RSH3"]')
            for glob, sel in value.items():
                items = _str_list(sel, f"{where} {glob!r}")
                check_codes(items, codes, f"{where} {glob!r}")
                cfg.per_file_ignores[glob] = items
        elif key == "per-file-runtime":
            if not isinstance(value, dict):
                raise ConfigError(f'{where} must be a table of glob = "single-controller", e.g. '
                                  '[tool.reshard-lint.per-file-runtime] "tests/*" = "single-controller"')
            cfg.options["per-file-runtime"] = tuple(
                (glob, check_runtime(rt, f"{where} {glob!r}"), cfg.root) for glob, rt in value.items())
        elif key == "runtime":
            cfg.options["runtime"] = check_runtime(value, where)
        elif key == "platforms":
            cfg.options["platforms"] = check_platforms(_str_list(value, where), where)
        elif key == "src":
            # The import roots, as ruff's ``src``: relative to this file's directory.
            roots = _str_list(value, where)
            cfg.options["src"] = tuple(os.path.normpath(os.path.join(cfg.root, d)) for d in roots)
        elif key in LIBRARY_KEYS:
            # As JSON text: the settings are keys of engines and of the cache (hashable).
            cfg.options[key] = json.dumps(check_library(value, key, where), sort_keys=True)
        elif key == "multicontroller":
            raise ConfigError(f"{where}: replaced by runtime = \"multi-controller\" (every file is "
                              "multi-controller, was \"always\") or \"auto\" (the default); "
                              "see docs/runtimes.md")
        elif key in options:
            opt = options[key]
            choices = list(opt.get("choices") or ())
            if choices and value not in choices:
                raise ConfigError(f"{where} = {value!r}: must be one of "
                                  f"{', '.join(repr(c) for c in choices)}")
            if not choices and type(value) is not type(opt.get("default")):
                raise ConfigError(f"{where} = {value!r}: must be a {type(opt.get('default')).__name__}")
            cfg.options[key] = value
        else:
            raise ConfigError(f"{path}: [{SECTION}] unknown key {key!r}; allowed: {', '.join(allowed)}")
    return cfg


# Objects of other packages that keep what they are given: entries over the vocabulary's
# LIBRARY_OBJECTS and LIBRARY_KINDS (analysis/library.py, docs/library-objects.md).
LIBRARY_KEYS = ("library-objects", "library-kinds")
_LIBRARY_ENTRY: dict[str, dict[str, type | tuple[type, ...]]] = {
    "library-objects": {"makes": str, "given": dict, "reads": str, "of": (int, str, list), "item": list,
                        "stores": str, "into": (int, str, list), "value": (int, str, list)},
    "library-kinds": {"keeps": list, "assign": bool, "shares": bool, "methods": dict, "placement": str},
}


def check_library(value: object, key: str, where: str) -> dict[str, dict[str, object]]:
    """A table of name = {field = value, ...} whose fields are the ones the analysis reads,
    each of the type it reads."""
    fields = _LIBRARY_ENTRY[key]
    example = ('"mylib.Model.load" = { makes = "model-with-params" }' if key == "library-objects"
               else '"my-model" = { keeps = ["params"], assign = true }')
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table, e.g. [{SECTION}.{key}] {example}")
    out: dict[str, dict[str, object]] = {}
    for name, entry in value.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} {name!r} must be a table, e.g. {example}")
        for field_name, v in entry.items():
            kind = fields.get(field_name)
            if kind is None:
                raise ConfigError(f"{where} {name!r}: unknown field {field_name!r}; "
                                  f"allowed: {', '.join(fields)}")
            if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
                raise ConfigError(f"{where} {name!r} {field_name} = {v!r}: wrong type")
        out[str(name)] = dict(entry)
    return out


def check_runtime(value: object, where: str) -> str:
    if value not in RUNTIMES:
        raise ConfigError(f"{where} = {value!r}: must be one of {', '.join(repr(r) for r in RUNTIMES)}")
    return str(value)


# per-file-runtime: (glob, runtime, the directory the glob is relative to), in the order written.
PerFileRuntime = tuple[tuple[str, str, str], ...]


def glob_matches(path: str, root: str, glob: str) -> bool:
    """Whether a per-file glob (per-file-ignores, per-file-runtime) covers ``path``: a glob
    with a ``/`` matches the path from ``root`` (a directory covers what is under it); one
    without matches the file's name or any directory on its path, as ``exclude`` does."""
    r = os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")
    g = glob.rstrip("/")
    if "/" in g:
        return fnmatch.fnmatchcase(r, g) or fnmatch.fnmatchcase(r, g + "/*")
    return any(fnmatch.fnmatchcase(part, g) for part in r.split("/"))


def runtime_for(path: str, table: object) -> tuple[str, str] | None:
    """(glob, runtime) of the first per-file-runtime entry that covers ``path``, or None."""
    if not table or not path or path.startswith("<"):
        return None
    for glob, runtime, root in table:  # type: ignore[attr-defined]  # (a PerFileRuntime)
        if glob_matches(path, root, glob):
            return glob, runtime
    return None


def parse_per_file_runtime(text: str, root: str, where: str) -> PerFileRuntime:
    """flake8's form of the table, as its per-file-ignores: ``glob:runtime`` entries separated
    by commas, blanks or lines (``tests/*:single-controller docs/*.py: single-controller``)."""
    out: list[tuple[str, str, str]] = []
    for entry in re.split(r"[,\s]+(?=[^,\s:]+\s*:)", text.strip()):
        entry = entry.strip().strip(",")
        if not entry:
            continue
        glob, sep, runtime = entry.rpartition(":")
        if not sep or not glob.strip():
            raise ConfigError(f"{where}: {entry!r} is not glob:runtime, e.g. tests/*:single-controller")
        out.append((glob.strip(), check_runtime(runtime.strip(), f"{where} {glob.strip()!r}"), root))
    return tuple(out)


def check_platforms(values: Iterable[str], where: str) -> tuple[str, ...]:
    """A non-empty list of "tpu", "gpu", "cpu", in the canonical order."""
    items = [v.strip().lower() for v in values if v.strip()]
    bad = [v for v in items if v not in PLATFORMS]
    if bad or not items:
        raise ConfigError(f"{where} = {list(values)!r}: must be a non-empty list of "
                          f"{', '.join(repr(p) for p in PLATFORMS)}")
    return tuple(p for p in PLATFORMS if p in items)


def _str_list(value: object, where: str) -> list[str]:
    if isinstance(value, str):
        raise ConfigError(f'{where} must be a list of strings, e.g. ["{value}"], not a string')
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, got {value!r}")
    return list(value)


def check_codes(items: Iterable[str], known: Sequence[str], where: str) -> None:
    """Each ``RSH`` item must be one of our codes or a prefix of one (``RSH``, ``RSH2``,
    ``RSH201``): a misspelt one (``RSH999``, ``RSHX``) is a mistake. Another tool's code
    (``E501``, ``PLR0913``) is accepted and matches none of ours, as ruff accepts unknown
    plugin codes, so one select/ignore list serves flake8, ruff and reshard-lint; a prefix of
    ``RSH`` itself (``R``) matches ours, as it does in flake8."""
    for item in items:
        code = item.upper()
        if code.startswith("RSH") and not any(k.startswith(code) for k in known):
            raise ConfigError(f"{where}: unknown code {item!r}; known codes: {', '.join(known)} "
                              "(or a prefix such as RSH2)")
        if not re.fullmatch(r"[A-Z]+[0-9]*", code):
            raise ConfigError(f"{where}: {item!r} is not a code (letters then digits, "
                              "such as RSH201, RSH2 or E501)")


def split_codes(text: str) -> list[str]:
    return [c.strip().upper() for c in text.replace(" ", ",").split(",") if c.strip()]
