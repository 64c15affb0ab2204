"""Whether a line of the user's code runs alike on every process. Pure Python, no jax.

Every process of a multi-controller job runs the same program; what differs between them
is what they are told about themselves (``jax.process_index()``, ``jax.local_devices()``,
their environment). Strict mode plays one process, and judges a placement step as every
other process would run it only when two things are shown from the source of the frames
on the call stack:

- the line is not under a process-dependent branch in any of those frames: no enclosing
  ``if`` / ``while`` / ``for`` / conditional expression / ``and`` / ``or`` / comprehension,
  and no earlier ``if ...: return`` (``raise``, ``continue``, ``break``) or ``assert`` in
  an enclosing block, whose test mentions a process-dependent name (``TAINT``, names
  assigned from them in any user module strict mode has read, functions whose body uses
  them, and names that say so: ``rank``, ``chief``, ``is_main`` ...);
- the device argument is a pick from JAX's global list, spelled so that it is the same
  on every process: ``jax.devices(...)[k]`` with a constant ``k`` and constant backend
  arguments, directly or through names bound once, in the same function or module, to
  such expressions (``cpus = jax.devices("cpu")`` ... ``cpus[0]``).

Anything else (a parameter, a name bound twice or in a loop, source that cannot be read)
is unknown, and an unknown step is judged only as the played process: a miss, never a
false error.
"""

from __future__ import annotations

import ast
import linecache
import sys
from types import CodeType, FrameType
from typing import Any, Callable, Iterator, Optional

from ._where import is_library

# Names whose value differs between processes, or that read what differs.
TAINT_BASE = frozenset({
    "process_index", "local_devices", "local_device_count", "addressable_data",
    "addressable_shards", "addressable_devices", "is_fully_addressable", "host_id",
    "environ", "getenv", "gethostname", "getpid", "getfqdn", "node",
})
# Parts of names that say the value is about this process (a user's own helper or flag).
TAINT_PARTS = ("process_index", "process_id", "proc_id", "rank", "chief", "is_main", "main_process",
               "master", "leader", "coordinator", "primary", "host_id", "hostname", "local_device",
               "worker_id", "is_first", "first_process", "host_index", "task_id")

_BLOCKS = ("body", "orelse", "finalbody", "handlers")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)
_JUMPS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class _File:
    __slots__ = ("tree", "parents", "calls", "tainted")

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        self.calls: dict[tuple[int, int, int, int], ast.Call] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            if isinstance(node, ast.Call) and node.end_lineno is not None:
                self.calls[(node.lineno, node.col_offset, node.end_lineno,
                            node.end_col_offset or 0)] = node
        self.tainted: set[str] = set()


# filename -> (the lines read, the parsed file): kept across programs (a test suite reads
# its modules once), reparsed when the lines differ (exec'd programs reuse names).
_files: dict[str, tuple[list[str], _File | None]] = {}
# Names a project's own modules (not installed packages) bind from process-dependent
# values: they may be imported anywhere (``from utils import IS_MAIN``).
_tainted: set[str] = set()
_read_modules: set[str] = set()
_seen_files: set[str] = set()  # read for this program


def forget() -> None:
    """A new program: its modules are read again (from the parse cache when unchanged)."""
    _tainted.clear()
    _read_modules.clear()
    _seen_files.clear()
    _guard_cache.clear()


def _project_file(filename: str) -> bool:
    return not is_library(filename) and "site-packages" not in filename and "dist-packages" not in filename


def _file(filename: str, module_globals: dict[str, Any] | None) -> _File | None:
    if filename in _seen_files and filename in _files:
        return _files[filename][1]
    lines = linecache.getlines(filename, module_globals)
    cached = _files.get(filename)
    if cached is not None and (cached[0] is lines or cached[0] == lines):
        found = cached[1]
    else:
        found = None
        if lines:
            try:
                found = _File(ast.parse("".join(lines), filename))
            except (SyntaxError, ValueError):
                found = None
            if found is not None:
                _learn_taint(found)
        if len(_files) > 4096:
            _files.clear()
        _files[filename] = (lines, found)
    _seen_files.add(filename)
    if found is not None and _project_file(filename) and not found.tainted <= _tainted:
        _tainted.update(found.tainted)
        _guard_cache.clear()  # verdicts made without these names
    return found


def _names(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr


def is_tainted_name(name: str, own: set[str] | frozenset[str] = frozenset()) -> bool:
    if name.startswith("__") or name == "_":
        return False
    if name in TAINT_BASE or name in _tainted or name in own:
        return True
    low = name.lower()
    return any(part in low for part in TAINT_PARTS)


def _mentions(node: ast.AST, own: set[str] | frozenset[str] = frozenset()) -> bool:
    return any(is_tainted_name(n, own) for n in _names(node))


def _learn_taint(info: _File) -> None:
    """Names bound from process-dependent values, and functions that use them: to a
    fixpoint, for the file's own tests (a project's files: for every file's)."""
    bindings: list[tuple[list[str], ast.AST]] = []
    for node in ast.walk(info.tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n for t in targets for n in _names(t)
                     if not isinstance(t, ast.Subscript)]
            if node.value is not None:
                bindings.append((names, node.value))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bindings.append(([node.name], node))
    own = info.tainted
    changed = True
    while changed:
        changed = False
        for names, value in bindings:
            if all(n in own for n in names):
                continue
            if _mentions(value, own):
                for n in names:
                    if n not in own and not n.startswith("__"):
                        own.add(n)
                        changed = True


def _read_loaded_modules() -> None:
    """Process-dependent names may be bound in a module no frame of the stack belongs to
    (``IS_MAIN`` in a utils module): read every user module loaded so far, once."""
    for name, module in list(sys.modules.items()):
        if name in _read_modules:
            continue
        _read_modules.add(name)
        filename = getattr(module, "__file__", None)
        if not filename or not filename.endswith(".py") or not _project_file(filename):
            continue
        _file(filename, getattr(module, "__dict__", None))


def user_frames(frame: FrameType | None) -> Iterator[FrameType]:
    while frame is not None:
        if not is_library(frame.f_code.co_filename):
            yield frame
        frame = frame.f_back


def _position(frame: FrameType) -> tuple[int, int, int, int] | None:
    try:
        positions = list(frame.f_code.co_positions())
        found = positions[frame.f_lasti // 2]
    except (AttributeError, IndexError):
        return None
    if None in found:
        return None
    return found  # type: ignore[return-value]


def _node_at(info: _File, pos: tuple[int, int, int, int]) -> ast.AST | None:
    """The innermost node spanning the instruction's position."""
    line, end_line, col, end_col = pos
    best: ast.AST | None = None
    for node in ast.walk(info.tree):
        start = (getattr(node, "lineno", None), getattr(node, "col_offset", None))
        stop = (getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
        if None in start or None in stop:
            continue
        if start <= (line, col) and (end_line, end_col) <= stop:
            best = node  # ast.walk is breadth-first: later matches are deeper
    return best


def _guarded(info: _File, node: ast.AST) -> bool:
    """Whether ``node`` runs only on some processes, within its own function or module."""
    def _mentions_taint(test: ast.AST) -> bool:
        return _mentions(test, info.tainted)

    child = node
    parent = info.parents.get(child)
    while parent is not None and not isinstance(child, _SCOPES):
        if isinstance(parent, (ast.If, ast.While, ast.IfExp)) and child is not parent.test \
                and _mentions_taint(parent.test):
            return True
        if isinstance(parent, (ast.For, ast.AsyncFor)) and child is not parent.iter \
                and _mentions_taint(parent.iter):
            # a loop over something process-dependent (callbacks only the main process
            # registered): its body may run on some processes only
            return True
        if isinstance(parent, ast.BoolOp):
            index = next((i for i, v in enumerate(parent.values) if v is child), 0)
            if any(_mentions_taint(v) for v in parent.values[:index]):
                return True
        if isinstance(parent, ast.comprehension) and child is not parent.iter \
                and any(_mentions_taint(c) for c in parent.ifs):
            return True
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
                and any(_mentions_taint(c) for g in parent.generators for c in (*g.ifs, g.iter)):
            return True
        if isinstance(parent, ast.match_case):
            match = info.parents.get(parent)
            if isinstance(match, ast.Match) and _mentions_taint(match.subject):
                return True
        if isinstance(child, ast.stmt):
            for block in _BLOCKS:
                stmts = getattr(parent, block, None)
                if not isinstance(stmts, list) or child not in stmts:
                    continue
                for earlier in stmts[:stmts.index(child)]:
                    if isinstance(earlier, ast.Assert) and _mentions_taint(earlier.test):
                        return True
                    if isinstance(earlier, ast.If) and _mentions_taint(earlier.test) \
                            and _jumps(earlier):
                        return True
        child, parent = parent, info.parents.get(parent)
    return False


def _jumps(node: ast.If) -> bool:
    todo: list[ast.AST] = [*node.body, *node.orelse]
    while todo:
        sub = todo.pop()
        if isinstance(sub, _JUMPS):
            return True
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(sub))
    # sys.exit() and the like end the process too
    return any(isinstance(s, ast.Call) and isinstance(s.func, (ast.Name, ast.Attribute))
               and (getattr(s.func, "id", None) or getattr(s.func, "attr", None)) in ("exit", "_exit")
               for b in (node.body, node.orelse) for stmt in b for s in ast.walk(stmt))


_guard_cache: dict[tuple[CodeType, int], bool] = {}


def runs_on_every_process(frame: FrameType | None) -> bool:
    """True when, in every user frame from ``frame`` outwards, the current line is shown to
    run on every process alike (readable source, no process-dependent branch above it)."""
    _read_loaded_modules()
    seen = False
    for f in user_frames(frame):
        key = (f.f_code, f.f_lasti)
        verdict = _guard_cache.get(key)
        if verdict is None:
            info = _file(f.f_code.co_filename, f.f_globals)
            pos = _position(f)
            node = _node_at(info, pos) if info is not None and pos is not None else None
            verdict = node is not None and not _guarded(info, node)  # type: ignore[arg-type]
            if len(_guard_cache) > 4096:
                _guard_cache.clear()
            _guard_cache[key] = verdict
        if not verdict:
            return False
        seen = True
    return seen


# --------------------------------------------------------------------------- device picks

def call_at(frame: FrameType) -> tuple[_File, ast.Call] | None:
    info = _file(frame.f_code.co_filename, frame.f_globals)
    pos = _position(frame)
    if info is None or pos is None:
        return None
    line, end_line, col, end_col = pos
    call = info.calls.get((line, col, end_line, end_col))
    return (info, call) if call is not None else None


def argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return None


def _scope_of(info: _File, node: ast.AST) -> ast.AST:
    parent = info.parents.get(node)
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    while parent is not None and not isinstance(parent, scopes):
        parent = info.parents.get(parent)
    return parent if parent is not None else info.tree


def _bindings(scope: ast.AST, name: str) -> list[ast.AST]:
    """Every node binding ``name`` directly in ``scope`` (not in nested functions)."""
    found: list[ast.AST] = []
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        found.extend(p for p in params if p is not None and p.arg == name)
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                found.append(node)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            found.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (al.asname or al.name.split(".")[0]) == name for al in node.names):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _bound_value(info: _File, scope: ast.AST, name: str, frame: FrameType) -> tuple[ast.expr, ast.AST] | None:
    """The one expression ``name`` is bound to (a plain ``name = value``), and its scope."""
    if name in frame.f_code.co_freevars or name in frame.f_code.co_cellvars:
        return None
    found = _bindings(scope, name)
    if not found and not isinstance(scope, ast.Module):
        scope = info.tree
        found = _bindings(scope, name)
    if len(found) != 1 or not isinstance(found[0], ast.Name):
        return None
    assign = info.parents.get(found[0])
    if isinstance(assign, ast.Assign) and len(assign.targets) == 1 and assign.targets[0] is found[0]:
        return assign.value, scope
    if isinstance(assign, ast.AnnAssign) and assign.value is not None:
        return assign.value, scope
    return None


Resolver = Callable[[ast.expr, FrameType], Optional[str]]


class Picks:
    """Reads a device argument: ``global`` / ``local`` and how it is spelled, or None."""

    def __init__(self, resolve: Resolver) -> None:
        # resolve(func_expr, frame): "global" for jax.devices, "local" for jax.local_devices
        self.resolve = resolve

    def device(self, info: _File, expr: ast.expr, scope: ast.AST, frame: FrameType,
               depth: int = 0) -> tuple[str, str] | None:
        if depth > 4:
            return None
        if isinstance(expr, ast.Name):
            bound = _bound_value(info, scope, expr.id, frame)
            if bound is None:
                return None
            found = self.device(info, bound[0], bound[1], frame, depth + 1)
            return (found[0], f"{expr.id} = {found[1]}") if found else None
        if isinstance(expr, ast.Subscript) and _constant_index(expr.slice):
            listed = self.devices(info, expr.value, scope, frame, depth + 1)
            if listed is None:
                return None
            return listed[0], f"{listed[1]}[{ast.unparse(expr.slice)}]"
        return None

    def single_device_out(self, info: _File, func: ast.expr, scope: ast.AST,
                          frame: FrameType) -> tuple[str, str] | None:
        """The device ``d`` of ``jax.jit(f, out_shardings=SingleDeviceSharding(d))``, the
        function a call calls, written there or bound once to the name it calls, read as
        ``device`` reads a put's target; None otherwise."""
        if isinstance(func, ast.Name):
            bound = _bound_value(info, scope, func.id, frame)
            if bound is None:
                return None
            func, scope = bound
        if not isinstance(func, ast.Call) or _last_name(func.func) != "jit":
            return None
        out = next((k.value for k in func.keywords if k.arg == "out_shardings"), None)
        if not isinstance(out, ast.Call) or len(out.args) != 1 or out.keywords \
                or _last_name(out.func) != "SingleDeviceSharding":
            return None
        return self.device(info, out.args[0], scope, frame)

    def devices(self, info: _File, expr: ast.expr, scope: ast.AST, frame: FrameType,
                depth: int) -> tuple[str, str] | None:
        if depth > 4:
            return None
        if isinstance(expr, ast.Name):
            bound = _bound_value(info, scope, expr.id, frame)
            if bound is None:
                return None
            return self.devices(info, bound[0], bound[1], frame, depth + 1)
        if isinstance(expr, ast.Call) and all(isinstance(a, ast.Constant) for a in expr.args) \
                and all(isinstance(k.value, ast.Constant) and k.arg is not None for k in expr.keywords):
            plain = _is_module_level_name(info, expr.func, scope, frame)
            kind = self.resolve(expr.func, frame) if plain else None
            if kind is not None:
                return kind, ast.unparse(expr)
        return None


def _last_name(expr: ast.expr) -> str | None:
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else None


def _is_module_level_name(info: _File, func: ast.expr, scope: ast.AST, frame: FrameType) -> bool:
    """``jax.devices`` / ``devices``: its root name is not rebound in the function."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    return isinstance(scope, ast.Module) or not _bindings(scope, root.id)


def _constant_index(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _constant_index(node.operand)


def scope_of(info: _File, node: ast.AST) -> ast.AST:
    return _scope_of(info, node)


def bound_value(info: _File, scope: ast.AST, name: str, frame: FrameType) -> tuple[ast.expr, ast.AST] | None:
    """The one expression ``name`` is bound to in ``scope`` (else the module), and that scope.
    A name a nested scope only reads (a comprehension over it: a cell on Python 3.11) counts;
    one a nested function may rebind (``nonlocal``) does not."""
    if name in frame.f_code.co_cellvars and not any(
            isinstance(n, ast.Nonlocal) and name in n.names for n in ast.walk(scope)):
        found = _bindings(scope, name)
        if len(found) == 1 and isinstance(found[0], ast.Name):
            assign = info.parents.get(found[0])
            if isinstance(assign, ast.Assign) and len(assign.targets) == 1 and assign.targets[0] is found[0]:
                return assign.value, scope
        return None
    return _bound_value(info, scope, name, frame)
