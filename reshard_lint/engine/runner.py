"""Running the engine over many files: discovery, cache, worker processes.

Every file goes through engine.check_source: the stages up to the slicing in ``_gate``
(in a worker or here), the analysis from what they prepared in ``_work``. Nothing here
builds the engine (or imports the rules and the analysis) unless a file actually needs
it: a warm run over an unchanged tree reads, hashes and prints.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..core.cache import Cache, diag_from_dict, diag_to_dict
from ..core.config import glob_matches
from ..core.diagnostic import Diagnostic
from .pipeline import Item, passed
from ..core.sources import Source, SourceError

if TYPE_CHECKING:
    from ..stages.prepared import Prepared

PARSE_ERROR = "RSH001"
INTERNAL_ERROR = "RSH002"
IO_ERROR = "RSH003"
# Codes about a whole file rather than a rule (as engine.py defines them): `# noqa`
# never applies to them. RSH001 and RSH003 are findings (exit 1, selectable and
# ignorable like a rule, as flake8's E999 and E902); RSH002 is a bug: always shown, exit 2.
ERROR_CODES = (PARSE_ERROR, INTERNAL_ERROR, IO_ERROR)
BUILTIN_CODES: dict[str, dict[str, Any]] = {
    PARSE_ERROR: {"code": PARSE_ERROR, "name": "parse-error", "severity": "error", "fix_safety": "none",
                  "options": [], "summary": "The file could not be parsed, so it was not checked."},
    INTERNAL_ERROR: {"code": INTERNAL_ERROR, "name": "internal-error", "severity": "error",
                     "fix_safety": "none", "options": [],
                     "summary": "reshard-lint failed while analysing the file; please report it."},
    IO_ERROR: {"code": IO_ERROR, "name": "io-error", "severity": "error", "fix_safety": "none", "options": [],
               "summary": "The file could not be read or decoded, so it was not checked."},
}
# Candidates left when the gate ends are shared with the workers from this many lines:
# a worker then imports the engine and holds a tree of its own.
MIN_SHARED_LINES = 4_000


@dataclass
class FileReport:
    path: str
    raw: bytes | None = None
    digest: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)  # engine output, unfiltered
    noqa_unknown: list[tuple[int, str]] = field(default_factory=list)  # (line, code) in noqa comments
    error: str | None = None  # why the file could not be read or decoded: an RSH003 message
    cached: bool = False  # served from the cache, not analysed
    _source: Source | None = None

    def release(self) -> None:
        """Drop the text of a file with nothing to report: a large tree need not stay in memory."""
        self.raw = None
        self._source = None

    @property
    def source(self) -> Source:
        """Decoded on first use: a cache hit with nothing to report never decodes.

        Bytes that are in the cache were decoded once already, so this cannot fail for
        them; a file that cannot be decoded is never cached.
        """
        if self._source is None:
            from ..core.sources import decode

            assert self.raw is not None
            self._source = decode(self.raw, self.path)
        return self._source


def read_error(reason: str) -> str:
    """The RSH003 message for a file that could not be read (SourceError.reason of read_bytes)."""
    reason = reason.removeprefix("cannot be read: ").removesuffix("; not read")
    if reason.startswith(("is ", "does ")):
        reason = "it " + reason
    return f"could not read the file: {reason}"


def decode_error(reason: str) -> str:
    """The RSH003 message for a file whose bytes are not text (SourceError.reason of decode)."""
    if reason.startswith("contains "):
        reason = "it " + reason
    return f"could not decode the file: {reason}"


def io_error_diagnostic(message: str) -> Diagnostic:
    """RSH003 at line 1, column 1 (0-based 0): there is no text to point into."""
    return Diagnostic(IO_ERROR, 1, 0, message)


def noqa_unknown(text: str, known: Sequence[str]) -> list[tuple[int, str]]:
    # Every file read pays this: one lowered copy is three times faster than the
    # case-insensitive regex, and only an RSH code in a noqa comment can be unknown.
    low = text.lower()
    if "noqa" not in low or "rsh" not in low:
        return []
    from ..core import noqa
    from ..core.fixes import split_lines

    return noqa.unknown_codes(split_lines(text), known)


# ---------------------------------------------------------------------------- rules


def rule_table(cache_dir: str | None = None) -> list[dict[str, Any]]:
    """Code, name, summary, fix safety, severity and options of every rule.

    Served from the cache when it has it (the rule modules import the analysis).
    """
    from ..core.cache import load_rules, save_rules

    cached = load_rules(cache_dir)
    if cached is not None:
        return cached
    from ..rules.catalog import static_table

    table = static_table() or _imported_table()
    save_rules(cache_dir, table)
    return table


def _imported_table() -> list[dict[str, Any]]:
    from ..rules import all_rules

    return [{
        "code": r.code, "name": r.name, "summary": r.summary, "fix_safety": r.fix_safety,
        "severity": r.severity,
        "options": [{"name": o.name, "default": o.default, "help": o.help, "choices": list(o.choices)}
                    for o in r.options],
    } for r in all_rules()]


# ---------------------------------------------------------------------------- discovery


class Excluder:
    """Glob patterns matched against a name and against the path from the project root.

    Compiled once into one regular expression: discovery calls it for every entry.
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        names = set()
        globs = []
        for p in patterns:
            p = p.rstrip("/")
            if not any(ch in p for ch in "*?[") and "/" not in p:
                names.add(p)
            else:
                globs.append(fnmatch.translate(p))
                globs.append(fnmatch.translate(p + "/*"))
        self.names = names
        self.regex = re.compile("|".join(globs)) if globs else None

    def __call__(self, name: str, rel: str) -> bool:
        if name in self.names:
            return True
        return self.regex is not None and (self.regex.match(name) is not None
                                           or self.regex.match(rel) is not None)


def discover(paths: Sequence[str], excludes: Sequence[str], root: str) -> tuple[list[str], list[str]]:
    """(Python files under ``paths``, paths that do not exist).

    Files named explicitly are always checked (a pre-commit hook passes them one by one);
    directories are walked, skipping excluded names and virtual environments.
    """
    files: list[str] = []
    missing: list[str] = []
    seen: set[str] = set()
    root = os.path.abspath(root)
    excluded = Excluder(excludes)

    def rel(p: str) -> str:
        a = os.path.abspath(p)
        if a.startswith(root + os.sep):
            a = a[len(root) + 1:]
        return a.replace(os.sep, "/")

    def add(p: str) -> None:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            files.append(p)

    for given in paths:
        if os.path.isdir(given):
            for dirpath, dirnames, filenames in os.walk(given):
                base = rel(dirpath)
                prefix = base + "/" if base else ""
                dirnames[:] = sorted(
                    d for d in dirnames
                    if not excluded(d, prefix + d)
                    and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg")))
                for f in sorted(filenames):
                    if f.endswith((".py", ".pyi")) and not excluded(f, prefix + f):
                        add(os.path.normpath(os.path.join(dirpath, f)))
        elif os.path.exists(given):
            add(os.path.normpath(given))
        else:
            missing.append(given)
    return files, missing


def per_file_ignored(path: str, root: str, per_file: Mapping[str, Sequence[str]]) -> list[str]:
    """Codes that ``per-file-ignores`` turns off for ``path`` (config.glob_matches: a glob
    with a ``/`` matches the path from the project root, a directory covering what is under
    it; one without matches the file's name or any directory on its path, as ``exclude``)."""
    if not per_file:
        return []
    out: list[str] = []
    for glob, codes in per_file.items():
        if glob_matches(path, root, glob):
            out.extend(codes)
    return out


# ---------------------------------------------------------------------------- engine

_ENGINE: Any = None


def _engine(settings: Mapping[str, object]) -> Any:
    global _ENGINE
    from ..core.collector import freeze_imports
    from .engine import engine_for

    _ENGINE = engine_for(settings)
    freeze_imports()  # the engine's module objects out of every later full collection
    return _ENGINE


_SETTINGS: dict[str, object] = {}  # this run's, for the projects the gate reads (forked workers inherit it)
# Whether this run caches results: only then are the interfaces of the project files a
# result read worth computing (forked workers inherit it too).
_INTERFACES = False


def project_device_imports(text: str, path: str) -> tuple[frozenset[str], dict[str, str]]:
    """Names the file imports from its project that may hold meshes (project/imported.py),
    and the project files read to say so (path -> digest)."""
    from ..project.projects import device_imports

    return device_imports(text, path, _SETTINGS)


def gate_interfaces(path: str, deps: Mapping[str, str]) -> dict[str, str]:
    """The interfaces of the project files the gate read for ``path`` (interface.py)."""
    if not deps or not _INTERFACES:
        return {}
    from ..project.projects import gate_projects

    return gate_projects(_SETTINGS).interfaces(path, deps)


def _gate(item: Item) -> tuple[Any, ...]:
    """Phase one, without the analysis: the stages up to the slicing (engine.check_source).
    A long file that passes is sliced here, where its tree and its units' gate facts are
    (prepared.py): the process that analyses it then parses only the slice."""
    from ..core.collector import GIVE_BACK_CHARS, give_back, paused
    from .engine import check_source
    from .pipeline import in_worker
    from ..stages.prepared import long_enough

    index, text, path = item[0], item[1], item[2]
    here = not in_worker()
    try:
        with paused(freeze=False):  # collector.py: a collection would rescan the file's whole tree
            # A short file keeps its tree for the engine in this process; a worker's file is
            # analysed in the main process or, from a copy of its text, here: a tree
            # would never be used, and alive it is rescanned.
            result = check_source(text, path, _SETTINGS, compile_rejected=True, analyse=False,
                                  keep_tree=here and not long_enough(text))
        if result.prepared is None:
            # holds while the modules it imports are unchanged
            return index, False, None, result.deps, gate_interfaces(path, result.deps)
        prepared = result.prepared
        if not here and prepared.line_map is None and not prepared.imports_project:
            # Only a slice is worth sending: the whole text is in the item already. A
            # file that reads the project's modules always sends its Prepared, which
            # says so (the engine slices one it is not given without them).
            return index, True, None
        return index, True, prepared
    except Exception:  # noqa: BLE001 - the engine will say what is wrong with it
        return index, True, None
    finally:
        if len(text) >= GIVE_BACK_CHARS:
            give_back()


def _analyse(settings: dict[str, object], item: Item) \
        -> tuple[int, list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """`_work` in a worker that may not have its engine yet (forked before the first file)."""
    _engine(settings)
    return _work(item)


def _work(item: Item) -> tuple[int, list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """(index, diagnostics, the project files read with their digests, and with their
    interfaces), computed here: the summaries that give the interfaces are this process's."""
    from ..core.collector import GIVE_BACK_PARSED_CHARS, give_back, paused
    from .engine import check_source

    index, text, path = item[0], item[1], item[2]
    prepared = item[3] if len(item) > 3 else None
    deps: dict[str, str] = {}
    interfaces: dict[str, str] = {}
    try:
        with paused(freeze=False):  # collector.py: no collections while the trees are built
            # The stages before the analysis ran in _gate: from what it prepared, if
            # anything, else from the whole text, with no names imported from the project.
            result = check_source(text, path, engine=_ENGINE, prepared=prepared, gate=False,
                                  imported=frozenset())
        diags = result.diagnostics
        deps = result.deps
        if _INTERFACES:
            interfaces = _ENGINE.projects.interfaces(path, deps)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not lose the others
        diags = [Diagnostic(INTERNAL_ERROR, 1, 0, f"internal error while analysing the file: "
                                                  f"{type(exc).__name__}: {exc}")]
    finally:
        if len(prepared.text if prepared is not None else text) >= GIVE_BACK_PARSED_CHARS:
            give_back()
    return index, [diag_to_dict(d) for d in diags], deps, interfaces


def lint_text(text: str, path: str, settings: Mapping[str, object]) -> list[Diagnostic]:
    """The engine in this process (fix rounds, standard input)."""
    global _SETTINGS, _INTERFACES
    _SETTINGS, _INTERFACES = dict(settings), False
    item = _gate((0, text, path))
    if not item[1]:
        return []
    _engine(settings)
    return [diag_from_dict(d) for d in _work(passed((0, text, path), item))[1]]


def lint_files(paths: Sequence[str], settings: Mapping[str, object], cache: Cache, jobs: int,
               known: Sequence[str], progress: Callable[[int, int], None] | None = None) -> list[FileReport]:
    """Read every file, serve what the cache knows, run the engine on the rest."""
    from ..core.cache import content_hash
    from ..stages.gate import prefilter
    from ..project.interface import still_holds
    from ..project.view import current, read_file, unchanged

    global _SETTINGS, _INTERFACES
    _SETTINGS, _INTERFACES = dict(settings), cache.directory is not None
    digests: dict[str, str | None] = {}  # project files' digests, read once per run
    reports: list[FileReport] = []
    done, total = 0, len(paths)

    def advance() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    def candidates() -> Iterator[tuple[int, str, str]]:
        """Read every file; the cache and the prefilter settle most of them here."""
        for path in paths:
            rep = FileReport(path)
            reports.append(rep)
            try:
                rep.raw = _read(path)
            except SourceError as exc:
                rep.error = read_error(exc.reason)
                advance()
                continue
            rep.digest = content_hash(rep.raw)
            cached = cache.get(rep.digest, os.path.abspath(path))
            if cached is not None and held(rep, *cached):
                rep.diagnostics, rep.noqa_unknown, rep.cached = cached[0], cached[1], True
                if not rep.diagnostics:
                    rep.release()
                advance()
                continue
            try:
                text = rep.source.text
            except SourceError as exc:
                rep.error = decode_error(exc.reason)
                advance()
                continue
            rep.noqa_unknown = noqa_unknown(text, known)
            # The prefilter here, where the file is read, so that only what may pass it is
            # queued for _gate (which asks again, in check_source). A file the prefilter
            # rules out is still compiled: a syntax error is RSH001 whatever words the
            # file holds (the engine says why).
            if prefilter(text):
                yield len(reports) - 1, text, path
                continue
            from .engine import refused

            if refused(text):
                yield len(reports) - 1, text, path
                continue
            imported, deps = project_device_imports(text, path)
            if imported:
                yield len(reports) - 1, text, path
            else:
                reject(len(reports) - 1, deps, gate_interfaces(path, deps))

    def held(rep: FileReport, diags: list[Diagnostic], noqa_found: list[tuple[int, str]],
             deps: dict[str, str], interfaces: dict[str, str]) -> bool:
        """Does a cached entry hold? One that read other project files holds while each is
        unchanged, or changed without changing what importers see of it (its interface:
        project/interface.py); it is then stored again with their new digests."""
        if not deps or unchanged(deps, digests):
            return True
        if not still_holds(deps, interfaces, lambda p: current(p, digests), read_file):
            return False
        fresh = {p: current(p, digests) or d for p, d in deps.items()}
        cache.put(rep.digest, diags, noqa_found, fresh, os.path.abspath(rep.path), interfaces)
        return True

    def take(index: int, diags: list[dict[str, Any]], deps: dict[str, str],
             interfaces: dict[str, str] | None = None) -> None:
        rep = reports[index]
        rep.diagnostics = [diag_from_dict(d) for d in diags]
        if not any(d.code == INTERNAL_ERROR for d in rep.diagnostics):
            # internal errors: retried next run
            cache.put(rep.digest, rep.diagnostics, rep.noqa_unknown, deps, os.path.abspath(rep.path), interfaces)
        if not rep.diagnostics:
            rep.release()
        advance()

    def reject(index: int, deps: dict[str, str] | None = None, interfaces: dict[str, str] | None = None) -> None:
        rep = reports[index]
        cache.put(rep.digest, [], rep.noqa_unknown, deps, os.path.abspath(rep.path), interfaces)
        rep.release()
        advance()

    engine_settings = dict(settings)

    def analyse_here(item: Item) -> None:
        take(*_analyse(engine_settings, item))

    from .pipeline import worth_workers

    if jobs == 1 or not worth_workers(paths):
        for item in candidates():
            verdict = _gate(item)
            if verdict[1]:
                analyse_here(passed(item, verdict))
            else:
                reject(item[0], *verdict[3:])
        return reports
    from .pipeline import Workers, gate_and_analyse, share_keeping

    with Workers(jobs - 1, len(paths)) as workers:
        # The gate runs in the workers from the first file read on, while this process
        # reads the rest and then analyses the candidates found so far.
        items = gate_and_analyse(workers, candidates(), _gate, analyse_here, reject)
        # What is left when the gate ends is shared with the workers, unless it is less
        # than a worker's import of the engine is worth. The workers take the smallest files
        # first and this process the largest, so that the long files start early and the
        # two largest trees are not held at the same time.
        lines = sum(item[1].count("\n") for item in items)
        if len(items) < 2 or lines < MIN_SHARED_LINES:
            for item in items:
                analyse_here(item)
            return reports
        items.sort(key=lambda it: len(it[1]))
        for item in items:
            if len(item) > 3:
                item[3].tree = None  # a tree this process's gate kept is not sent to a worker
        # A file that reads the project's modules stays here, where their summaries
        # are: a module is analysed once per run however many files import it.
        share_keeping(workers, 2, items, _imports_project, partial(_analyse, engine_settings),
                      lambda _item, result: take(*result), analyse_here)
    return reports


def _imports_project(item: Item) -> bool:
    return len(item) > 3 and getattr(item[3], "imports_project", False)


def _read(path: str) -> bytes:
    """The file's bytes, or SourceError with the reason (FIFOs, devices, broken links ...)."""
    from ..core.sources import read_bytes

    return read_bytes(path)


def iter_reports_sorted(reports: Iterable[FileReport]) -> list[FileReport]:
    return sorted(reports, key=lambda r: r.path)
