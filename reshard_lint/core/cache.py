"""Result cache: engine diagnostics keyed by file content, tool build and settings.

A warm run must not import the engine (its import alone costs more than linting a cached
tree), so this module, and everything the runner needs on a cache hit, imports only
the standard library and the plain data modules (diagnostic).

Layout: ``<cache dir>/v1-<key>.json`` holds ``{"files": {hash: [diag]}}`` for one
(tool fingerprint, settings) key, and ``rules-<fingerprint>.json`` the rule table, so
that a warm run can validate codes and render names without importing the rules (which
import the engine). Entries are keyed by a blake2b hash of the file's raw bytes: a file that did
not change is not re-read by the engine, whatever its path or mtime.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any, Iterable, Mapping

from .. import __version__
from .diagnostic import Diagnostic, Edit, Fix, Import, Related

SCHEMA = 2
# Beyond this many entries a cache file keeps only the entries of the current run, so a
# long-lived cache over a changing tree does not grow without bound.
MAX_ENTRIES = 200_000

_FINGERPRINT: str | None = None
# Parts of the package that cannot change what the engine reports; editing them must
# not throw the cache away.
_NOT_ANALYSIS = frozenset({"__pycache__", "runtime", "formats", "lsp.py", "cli.py", "flake8_plugin.py",
                           "docs.py", "writer.py", "__main__.py", "config.py"})


def tool_fingerprint() -> str:
    """The version plus the contents of the modules that decide what the engine reports.

    The version alone would keep stale results in an editable install while the rules
    change; contents rather than mtimes, so that a checkout or a formatter touching the
    files does not throw the cache away. Hashing the ~170 modules takes a few milliseconds,
    once per process.
    """
    global _FINGERPRINT
    if _FINGERPRINT is None:
        h = hashlib.blake2b(digest_size=12)
        h.update(__version__.encode())
        root = _package_root()
        for path in fingerprinted_files():
            h.update(os.path.relpath(path, root).encode() + b"\0")
            try:
                with open(path, "rb") as fh:
                    h.update(fh.read())
            except OSError:
                pass
            h.update(b"\0")
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # reshard_lint/, above core/


def fingerprinted_files() -> list[str]:
    """The package's modules whose contents key the cache: every one but the front ends'
    own and strict mode (the analysis, the models, the project layer, the rules, the stages)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(_package_root()):
        dirnames[:] = sorted(d for d in dirnames if d not in _NOT_ANALYSIS)
        out.extend(os.path.join(dirpath, name) for name in sorted(filenames)
                   if name.endswith(".py") and name not in _NOT_ANALYSIS)
    return out


def content_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def settings_key(settings: Mapping[str, object]) -> str:
    blob = json.dumps({"v": SCHEMA, "tool": tool_fingerprint(), "settings": dict(settings)},
                      sort_keys=True, default=str)
    return hashlib.blake2b(blob.encode(), digest_size=10).hexdigest()


def diag_to_dict(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"c": d.code, "l": d.line, "o": d.col, "m": d.message,
                           "el": d.end_line, "eo": d.end_col}
    if d.fix is not None:
        out["f"] = {"t": d.fix.title, "s": d.fix.safe,
                    "e": [[e.line, e.col, e.end_line, e.end_col, e.replacement] for e in d.fix.edits]}
        if d.fix.imports:
            out["f"]["i"] = [[i.module, i.name, i.alias] for i in d.fix.imports]
    if d.related:
        out["r"] = [[r.line, r.col, r.message] + ([r.path, True] if r.step else [r.path] if r.path is not None else [])
                    for r in d.related]
    return out


def diag_from_dict(o: Mapping[str, Any]) -> Diagnostic:
    fix = None
    if "f" in o:
        f = o["f"]
        fix = Fix(f["t"], tuple(Edit(*e) for e in f["e"]), bool(f["s"]),
                  tuple(Import(*i) for i in f.get("i", ())))
    related = tuple(Related(*r) for r in o.get("r", ()))
    return Diagnostic(o["c"], o["l"], o["o"], o["m"], o["el"], o["eo"], fix, related)


class Cache:
    """One cache file for one settings key; ``None`` directory means disabled."""

    def __init__(self, directory: str | None, settings: Mapping[str, object]) -> None:
        self.directory = directory
        self.key = settings_key(settings) if directory else ""
        self._old: dict[str, dict[str, Any]] = {}
        self._used: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self.hits = 0
        if directory:
            self._load()

    @property
    def path(self) -> str:
        return os.path.join(self.directory or "", f"v{SCHEMA}-{self.key}.json")

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                data = json.loads(fh.read())
            if isinstance(data, dict) and isinstance(data.get("files"), dict):
                self._old = data["files"]
        except (OSError, ValueError):
            # A missing or corrupt cache is an empty cache, never an error.
            self._old = {}

    def get(self, digest: str, path: str = "") -> \
            tuple[list[Diagnostic], list[tuple[int, str]], dict[str, str], dict[str, str]] | None:
        """(engine diagnostics, unknown codes in noqa comments, the project files the
        analysis read with their digests, and with their interfaces: project/interface.py)
        of a file with this content. An entry that read other files holds only for the file
        at ``path`` it was made for: the same text elsewhere imports other modules."""
        entry = None
        for key in (f"{digest}@{path}", digest):  # an entry that read other files is the path's
            entry = self._old.get(key) or self._used.get(key)
            if entry is not None:
                digest = key
                break
        if entry is None:
            return None
        try:
            deps = {str(p): str(d) for p, d in entry.get("p", {}).items()}
            if deps and entry.get("f") != path:
                return None
            out = ([diag_from_dict(o) for o in entry["d"]], [(int(n), str(c)) for n, c in entry.get("q", ())],
                   deps, {str(p): str(i) for p, i in entry.get("i", {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self._used[digest] = entry
        self.hits += 1
        return out

    def put(self, digest: str, diagnostics: Iterable[Diagnostic],
            noqa_unknown: Iterable[tuple[int, str]] = (), deps: Mapping[str, str] | None = None,
            path: str = "", interfaces: Mapping[str, str] | None = None) -> None:
        entry: dict[str, Any] = {"d": [diag_to_dict(d) for d in diagnostics]}
        q = [list(x) for x in noqa_unknown]
        if q:
            entry["q"] = q
        if deps:
            entry["p"] = dict(deps)
            entry["f"] = path
            if interfaces:
                entry["i"] = dict(interfaces)
            digest = f"{digest}@{path}"  # the same text elsewhere imports other modules
        self._used[digest] = entry
        self.dirty = True

    def save(self) -> None:
        """Atomically replace the cache file; failures only cost speed next time."""
        if not self.directory or not self.dirty:
            return
        files = dict(self._old)
        files.update(self._used)
        if len(files) > MAX_ENTRIES:
            files = dict(self._used)
        _write_json(self.directory, self.path, {"files": files})
        _prune(self.directory)


KEEP_FILES = 8


def _prune(directory: str) -> None:
    """Keep the most recent few cache files: each tool build or setting makes a new one."""
    try:
        names = [n for n in os.listdir(directory) if n.endswith(".json")]
        for prefix in ("v", "rules-"):
            mine = [os.path.join(directory, n) for n in names if n.startswith(prefix)]
            if len(mine) > KEEP_FILES:
                mine.sort(key=os.path.getmtime, reverse=True)
                for old in mine[KEEP_FILES:]:
                    os.unlink(old)
    except OSError:
        pass


def _rules_path(directory: str) -> str:
    return os.path.join(directory, f"rules-{tool_fingerprint()}.json")


def load_rules(directory: str | None) -> list[dict[str, Any]] | None:
    if not directory:
        return None
    try:
        with open(_rules_path(directory), "rb") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, list) and data else None


def save_rules(directory: str | None, table: list[dict[str, Any]]) -> None:
    if directory:
        _write_json(directory, _rules_path(directory), table)


def _write_json(directory: str, path: str, data: object) -> None:
    """Atomic replace; a cache that cannot be written only costs speed next time."""
    try:
        os.makedirs(directory, exist_ok=True)
        tag = os.path.join(directory, "CACHEDIR.TAG")
        if not os.path.exists(tag):
            with open(tag, "w", encoding="ascii") as fh:
                fh.write("Signature: 8a477f597d28d172789f06886806bc55\n"
                         "# This file is a cache directory tag created by reshard-lint.\n")
            with open(os.path.join(directory, ".gitignore"), "w", encoding="ascii") as fh:
                fh.write("*\n")
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, separators=(",", ":"))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError:
        pass
