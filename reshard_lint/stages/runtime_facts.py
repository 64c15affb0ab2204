"""Where a module's code runs, read from Python's tree of it (docs/runtimes.md).

What the program does decides, never words in its text: a comment or a docstring that
names ``--xla_force_host_platform_device_count`` says nothing. The text is only asked
first whether the tree can hold anything (a substring test), so that most modules are
never parsed for it.

- **One process** (``Facts.one_process``): ``jax.config.update("jax_num_cpu_devices", n)``
  (also through jax's test helper ``jtu.request_cpu_devices(n)``), or
  ``--xla_force_host_platform_device_count`` (or ``JAX_NUM_CPU_DEVICES``) written into the
  process's environment: ``os.environ["XLA_FLAGS"] = ...``, ``os.environ.setdefault``,
  ``os.environ.update``, ``os.putenv``, pytest's ``monkeypatch.setenv``. An environment
  built for a child process (``env = dict(os.environ); env["XLA_FLAGS"] = ...``) is not
  this process's and does not count.
- **Several processes whatever else it says** (``Facts.launches``): a call of
  ``jax.distributed.initialize``, or jax's multi-process test runner
  (``jax._src.test_multiprocess``), which calls it.
- **Pathways** (``Facts.pathways``): the process selects Pathways' proxy backend:
  ``jax.config.update("jax_platforms", "proxy")`` or ``JAX_PLATFORMS`` holding ``proxy``
  written into its environment. Importing or initialising ``pathwaysutils`` says nothing:
  its ``initialize()`` acts only when that backend is selected, and programs call it
  whether they run on Pathways or as multi-controller JAX (maxtext's trainer).
- **Multi-process uses** (``uses_multi_process``): ``jax.process_index()``,
  ``jax.distributed``, ``multihost_utils.process_allgather(...)`` ... used, not imported.
- **Colocated Python** (``colocated_nodes``): the bodies of functions decorated with
  ``colocated_python.colocated_python`` (or classes with ``colocated_python_class``), or
  passed to it, and of the functions only they call: they run on the colocated CPU host,
  dispatched by one controller.

Each fact of ``Facts`` is also kept for the code that runs when the module is imported
(``*_at_import``: not inside a function's body), which is what an importer runs of it.

Standard library and the vocabulary only: the project layer's interface hashes read it
in a warm run without importing the engine.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..core import vocabulary as api
from . import program_units
from .newer_syntax import parse

SINGLE = "single-controller"
MULTI = "multi-controller"
# Why a finding in code that runs only through colocated Python is not reported.
COLOCATED = "colocated Python"
# What says one process, as a reason names it.
NUM_CPU = api.NUM_CPU_DEVICES
FORCE_FLAG = "--" + api.FORCE_HOST_DEVICE_COUNT
# What says Pathways: the proxy backend selected.
PROXY = f"{api.PLATFORMS_OPTION}={api.PATHWAYS_BACKEND!r}"


@dataclass(frozen=True)
class Facts:
    one_process: str = ""  # NUM_CPU or FORCE_FLAG, set somewhere in the module; "": none
    one_process_at_import: str = ""  # the same, by code that runs on import
    launches: bool = False  # jax.distributed.initialize or jax's multi-process runner
    pathways: bool = False  # selects Pathways' proxy backend
    pathways_at_import: bool = False

    def key(self) -> str:
        """What an importer reads of them, for the module's interface hash."""
        return "|".join((self.one_process, self.one_process_at_import, str(int(self.launches)),
                         str(int(self.pathways)), str(int(self.pathways_at_import))))


NONE = Facts()


@dataclass(frozen=True)
class Decision:
    """Where one file's code runs, and why."""

    runtime: str  # MULTI or SINGLE
    reason: str = ""  # why SINGLE, as `reshard-lint coverage` prints it
    explicit: bool = False  # from a setting (runtime, per-file-runtime), not detected


# An import statement, as the project layer resolves it: ``import a.b`` is
# ("import", 0, "a.b", ()); ``from ..m import x, y`` is ("from", 2, "m", ("x", "y")).
ImportLine = tuple[str, int, str, tuple[str, ...]]


@dataclass(frozen=True)
class FileFacts:
    """What the whole file says, for the analysis of a slice of it: read where Python's
    tree of the whole file is (stages/prepared.py), so that no one parses it again."""

    facts: Facts
    multi_process: bool  # uses_multi_process
    imports: tuple[ImportLine, ...]
    # The line spans of the top-level functions and classes that run in no program with
    # such a use (program_units.py): their code is not taken for multi-process code.
    apart: tuple[tuple[int, int], ...] = ()


def file_facts(tree: ast.Module, text: str) -> FileFacts:
    names = _Names(tree, text)  # one walk of the import lines for the three
    facts = facts_of(tree, text, names) if may_say(text) else NONE
    units = multi_process_units(text, tree, names)
    lines = program_units.lines_apart(tree, units) if units and not facts.launches else ()
    return FileFacts(facts, bool(units), _import_lines(names.statements), lines)


def _import_lines(statements: list[ast.Import | ast.ImportFrom]) -> tuple[ImportLine, ...]:
    """The import statements as the project layer resolves them, in order."""
    out: list[ImportLine] = []
    for node in sorted(statements, key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Import):
            out.extend(("import", 0, a.name, ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append(("from", node.level, node.module or "", tuple(a.name for a in node.names)))
    return tuple(out)


def may_say(text: str) -> bool:
    """Can the module's tree hold a fact? (substring tests: most texts hold none of the words)"""
    return any(w in text for w in api.RUNTIME_WORDS)


def facts_of_text(text: str) -> Facts:
    """The facts of a module's text; NONE when it holds none of the words or does not parse."""
    if not may_say(text):
        return NONE
    try:
        tree = parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return NONE
    return facts_of(tree, text)


def facts_key(text: str) -> str:
    """``Facts.key`` of a module's text (interface.py hashes it)."""
    return facts_of_text(text).key()


def facts_of(tree: ast.Module, text: str, names: _Names | None = None) -> Facts:
    """The facts of Python's tree of ``text``. Only the statements on lines that name what
    a fact needs are walked (``_pruned``): a 7,000-line test file that names
    ``jax.distributed`` once costs that statement, not a walk of every node."""
    names = names or _Names(tree, text)
    lines = _lines_with(text, api.RUNTIME_WORDS + _ENV_WORDS + names.aliases(_facts_qual))
    flag_names = _flag_names(tree, lines)
    one, one_import, launches, pw, pw_import = "", "", False, False, False
    for node, deferred in _pruned(tree, lines):
        found = ""
        if isinstance(node, ast.Call):
            qual = names.qual(node.func)
            if qual in api.DISTRIBUTED_INITIALIZE:
                launches = True
            elif qual in api.CONFIG_UPDATES:
                option = _string(node.args[0]) if node.args else None
                if option == api.NUM_CPU_DEVICES:
                    found = NUM_CPU
                elif option == api.PLATFORMS_OPTION and len(node.args) >= 2 and _proxy(node.args[1]):
                    found = PROXY
            elif qual == api.REQUEST_CPU_DEVICES:
                found = NUM_CPU
            else:
                found = _env_call(node, qual, names, flag_names)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and names.qual(target.value) == api.ENVIRON:
                    found = found or _env_value(_string(target.slice), node.value, flag_names)
        elif isinstance(node, (ast.Name, ast.Attribute)) and not launches:
            qual = names.qual(node)
            launches = qual is not None and _in_family(qual, api.MULTIPROCESS_TEST_MODULE)
        if found == PROXY:
            pw, pw_import = True, pw_import or not deferred
        elif found:
            one = one or found
            if not deferred:
                one_import = one_import or found
    return Facts(one, one_import, launches, pw, pw_import)


# The environment's words a line that writes one of the variables names.
_ENV_WORDS = (api.XLA_FLAGS_ENV, api.NUM_CPU_DEVICES_ENV, api.PLATFORMS_ENV)


def _facts_qual(qual: str) -> bool:
    """Is a name bound to this worth finding on a line, for facts_of?"""
    return qual in api.DISTRIBUTED_INITIALIZE or qual in api.CONFIG_UPDATES or qual in (
        api.REQUEST_CPU_DEVICES, api.PUTENV, api.ENVIRON) or _in_family(qual, api.MULTIPROCESS_TEST_MODULE)


def _in_family(qual: str, family: str) -> bool:
    return qual == family or qual.startswith(family + ".")


def decide(setting: str, sources: Iterable[tuple[str, Facts]]) -> Decision:
    """``runtime = "auto"``'s decision for a file from the facts of what it runs: its own,
    and those of the conftest.py files and modules it imports (``where`` names each, as a
    reason says it). A Pathways client anywhere is single-controller; one process is, too,
    unless something launches several (jax.distributed.initialize wins)."""
    if setting == SINGLE:
        return Decision(SINGLE, 'runtime = "single-controller"', True)
    if setting == MULTI:
        return Decision(MULTI, "", True)
    one: tuple[str, str] | None = None
    pathways: str | None = None
    launches = False
    for where, facts in sources:
        launches = launches or facts.launches
        if facts.pathways and pathways is None:
            pathways = where
        if facts.one_process and one is None:
            one = (facts.one_process, where)
    if pathways is not None:
        return Decision(SINGLE, f"Pathways: {PROXY} in {pathways}")
    if one is not None and not launches:
        return Decision(SINGLE, f"single process: {one[0]} in {one[1]}")
    return Decision(MULTI)


def at_import(facts: Facts) -> Facts:
    """What an importer runs of a module: the code that runs when it is imported."""
    if facts is NONE:
        return facts
    return Facts(facts.one_process_at_import, facts.one_process_at_import, facts.launches,
                 facts.pathways_at_import, facts.pathways_at_import)


# ---------------------------------------------------------------------------- uses


def may_use_multi_process(text: str) -> bool:
    """Can ``uses_multi_process`` be true of the text? (substring tests)"""
    return any(w in text for w in api.MULTI_PROCESS_WORDS)


def uses_multi_process(text: str, tree: ast.Module | None, names: _Names | None = None) -> bool:
    """Does the module use (not only import) what multi-process code uses:
    ``jax.process_index()``, ``jax.distributed``, ``multihost_utils`` ...? ``tree``:
    Python's tree of ``text`` when at hand."""
    return bool(multi_process_units(text, tree, names, first=True))


def multi_process_units(text: str, tree: ast.Module | None, names: _Names | None = None,
                        first: bool = False) -> frozenset[str]:
    """The top-level definitions (functions and classes, by name; ``""`` for the rest of
    the module's code) that use what multi-process code uses. ``first``: stop at the
    first use found."""
    if not may_use_multi_process(text):
        return frozenset()
    if tree is None:
        try:
            tree = parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
    names = names or _Names(tree, text)
    lines = _lines_with(text, api.MULTI_PROCESS_WORDS + names.aliases(_multi_qual))
    found: set[str] = set()
    for statement in tree.body:
        unit = program_units.unit_name(statement)
        if unit in found:
            continue
        for node, _ in _pruned(statement, lines):
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                qual = names.qual(node)
                if qual is not None and _multi_qual(qual):
                    found.add(unit)
                    break
        if first and found:
            break
    return frozenset(found)


def _multi_qual(qual: str) -> bool:
    return qual in api.MULTI_PROCESS_USES or qual in api.DISTRIBUTED_INITIALIZE or any(
        _in_family(qual, f.rstrip(".")) for f in api.MULTI_PROCESS_FAMILIES)


# ---------------------------------------------------------------------------- colocated Python


def colocated_nodes(tree: ast.Module) -> frozenset[int]:
    """The ids of the nodes in code that runs only through colocated Python: the bodies of
    functions (and classes) decorated with, or passed to, ``colocated_python`` or
    ``colocated_python_class``, and of the functions whose name is read only there."""
    names = _Names(tree, None)
    defs: dict[str, list[ast.AST]] = {}
    reads: dict[str, list[int]] = {}  # name -> ids of the Name nodes that read it
    regions: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            reads.setdefault(node.id, []).append(id(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.setdefault(node.name, []).append(node)
            if any(_colocated(names.qual(d)) for d in node.decorator_list):
                regions.append(node)
        elif isinstance(node, ast.Call) and _colocated(names.qual(node.func)) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Lambda):
                regions.append(arg)
            elif isinstance(arg, ast.Name):
                regions.append(arg)  # resolved below, once every definition is known
    regions = [d for r in regions for d in (defs.get(r.id, []) if isinstance(r, ast.Name) else [r])]
    inside: set[int] = set()
    done: set[int] = set()
    while regions:
        for region in regions:
            if id(region) not in done:
                done.add(id(region))
                for part in _bodies(region):
                    inside.update(id(n) for n in ast.walk(part))
        # A function whose name is read only inside those bodies runs only there too.
        regions = [d for name, found in defs.items() for d in found
                   if id(d) not in done and reads.get(name) and all(r in inside for r in reads[name])]
    return frozenset(inside)


def _bodies(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Lambda):
        return [node.body]
    return list(getattr(node, "body", []))


def _colocated(qual: str | None) -> bool:
    if qual is None:
        return False
    qual = api.COLOCATED_SPELLINGS.get(qual, qual)
    return qual in (api.COLOCATED_PYTHON, api.COLOCATED_PYTHON_CLASS)


# ---------------------------------------------------------------------------- helpers


class _Names:
    """Local names to the qualified names the module's imports bind them to (read from the
    import statements on the lines that say ``import`` when the text is given)."""

    def __init__(self, tree: ast.Module, text: str | None) -> None:
        self.bound: dict[str, str] = {}
        self.statements: list[ast.Import | ast.ImportFrom] = []
        nodes = ast.walk(tree) if text is None else (n for n, _ in _pruned(tree, _lines_with(text, ("import",))))
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.statements.append(node)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.bound[top] = top
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        self.bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def aliases(self, wanted: Callable[[str], bool]) -> tuple[str, ...]:
        """The local names bound to what ``wanted`` accepts (a line that uses one need not
        name the API's word: ``jt_multiprocess.main()``)."""
        return tuple(local for local, qual in self.bound.items() if wanted(qual))

    def qual(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.bound.get(node.id)
        if base is None:
            return None
        return ".".join([base, *reversed(parts)])


def _lines_with(text: str, words: Iterable[str]) -> list[int]:
    """The numbers of the lines of ``text`` that hold one of ``words``, in order (str.find
    per word: the words are rare, and a regular expression's alternation of them tries
    each at every position)."""
    starts: set[int] = set()
    for word in set(words):
        if not word:
            continue
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(word, at + len(word))
    out: list[int] = []
    line, pos = 1, 0
    for start in sorted(starts):
        line += text.count("\n", pos, start)
        pos = start
        out.append(line)
    return out


def _pruned(tree: ast.AST, lines: list[int]) -> Iterator[tuple[ast.AST, bool]]:
    """The nodes whose lines take in one of ``lines`` (and the nodes without a position on
    the way to them), each with whether it is in a function's body (runs when the function
    is called, not on import). A subtree on other lines is not entered."""
    if not lines:
        return
    work: list[tuple[ast.AST, bool]] = [(tree, False)]
    while work:
        node, deferred = work.pop()
        start = getattr(node, "lineno", None)
        if start is not None:
            end = getattr(node, "end_lineno", None) or start
            at = bisect_left(lines, start)
            if at == len(lines) or lines[at] > end:
                continue
        yield node, deferred
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            work.extend((b, True) for b in body)
            inside = {id(b) for b in body}
            work.extend((c, deferred) for c in ast.iter_child_nodes(node) if id(c) not in inside)
        else:
            work.extend((c, deferred) for c in ast.iter_child_nodes(node))


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _holds_flag(node: ast.AST, flag_names: frozenset[str]) -> bool:
    for n in ast.walk(node):
        s = _string(n)
        if s is not None and api.FORCE_HOST_DEVICE_COUNT in s:
            return True
        if isinstance(n, ast.Name) and n.id in flag_names:
            return True
    return False


def _flag_names(tree: ast.Module, lines: list[int]) -> frozenset[str]:
    """Names bound to a text holding the flag (``flags = "--xla_force_...=8"``)."""
    out: set[str] = set()
    for node, _ in _pruned(tree, lines):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and _holds_flag(node.value, frozenset()):
            out.add(node.targets[0].id)
    return frozenset(out)


def _env_value(var: str | None, value: ast.AST, flag_names: frozenset[str]) -> str:
    """What writing ``value`` to the environment variable ``var`` says."""
    if var == api.NUM_CPU_DEVICES_ENV:
        return NUM_CPU
    if var == api.XLA_FLAGS_ENV and _holds_flag(value, flag_names):
        return FORCE_FLAG
    if var == api.PLATFORMS_ENV and _proxy(value):
        return PROXY
    return ""


def _proxy(value: ast.AST) -> bool:
    """A platforms value that names Pathways' proxy backend ("proxy", "proxy,cpu")."""
    text = _string(value)
    return text is not None and api.PATHWAYS_BACKEND in text.split(",")


def _env_call(node: ast.Call, qual: str | None, names: _Names, flag_names: frozenset[str]) -> str:
    """A call that writes the process's environment: os.environ.setdefault/update/__setitem__,
    os.putenv, monkeypatch.setenv."""
    func = node.func
    if qual == api.PUTENV or (isinstance(func, ast.Attribute) and func.attr == api.SETENV_METHOD):
        if len(node.args) >= 2:
            return _env_value(_string(node.args[0]), node.args[1], flag_names)
        return ""
    if not (isinstance(func, ast.Attribute) and func.attr in api.ENVIRON_WRITERS
            and names.qual(func.value) == api.ENVIRON):
        return ""
    if func.attr != "update":
        return _env_value(_string(node.args[0]), node.args[1], flag_names) if len(node.args) >= 2 else ""
    found = ""
    for arg in node.args[:1]:
        if isinstance(arg, ast.Dict):
            for k, v in zip(arg.keys, arg.values):
                found = found or (_env_value(_string(k), v, flag_names) if k is not None else "")
    for kw in node.keywords:
        found = found or _env_value(kw.arg, kw.value, flag_names)
    return found
