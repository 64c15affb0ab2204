"""The abstract interpreter: statements, scopes and the order functions run in.

It walks statements in program order, binding names to the values of values.py, and
reports semantic events (events.py) to a sink. Expressions are evaluated by
expressions.py, calls by calls.py, compound statements by flow.py, and known JAX, NumPy
and Python functions by the models in models/. Precision rules:

* where two paths disagree (branches, loops, handlers) a name becomes UNKNOWN; a path
  that returns, raises, breaks or continues does not count (flow.py);
* a function's parameters take the values its call sites pass (see calls.py), and are
  UNKNOWN where no call site is known or call sites disagree;
* a module-level name is visible inside functions only when it is bound once.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence, cast

from . import foreign, library, mutation
from .arguments import Call
from .tree import arg_value
from .calls import Calls
from .classes import Classes
from .callsites import NO_CALL_SITE, CallSites, parameter
from .comprehensions import Comprehensions
from .context import FileContext
from .events import Event, MeshBuilt, ShardingBuilt, Transfer
from .expressions import Expressions, none_test, truth
from .flow import Flow
from .functions import Functions
from .withs import WithBlocks
from .models import placement
from .reasons import CONTAINER
from .scope import COMPOUND, FUNCTIONS, Scope, count_bindings, names_in_target, with_rebound
from .valueops import element, ordered
from .values import (
    UNKNOWN, ArrayVal, ClassVal, ConstVal, DevVal, FuncVal, InstanceVal, JitVal, MeshDecoratorVal,
    MeshVal, HostVal,
    PartialVal, QualVal, SeqVal, ShardingVal, TransformVal, Value, func_name, unknown, unknown_from,
)

if TYPE_CHECKING:
    from .devices import Model

Sink = Callable[[Event], None]


class Analyzer(Expressions, Comprehensions, Calls, Functions, Classes, Flow, WithBlocks):
    def __init__(self, ctx: FileContext, sink: Sink) -> None:
        self.ctx = ctx
        self.sink = sink
        self.quiet = 0  # > 0 while evaluating a helper for its return value
        self.inline_stack: list[ast.AST] = []
        # The file of the other module whose function is running (FuncVal.home), None
        # for this file's: a function or class made while it runs is that module's too.
        self.home_now: Optional[str] = None
        self.context_mesh: Value = UNKNOWN
        # Some mesh context (known or not) may be in force: results follow it, not uncommitted.
        self.mesh_context = False
        # The jax.set_mesh call in force (a MeshContextVal), read by contextmesh.py.
        self.context_site: Value = UNKNOWN
        self.global_context: Value = UNKNOWN
        # reshard-lint coverage: where the first transfer of an expected-error block's
        # first statement goes (it runs: the block expects it to fail), and the quiet
        # level and helper depth it is taken at; no rule sees it.
        self.expected_sink: Optional[Sink] = None
        self.expecting: Optional[tuple[int, int]] = None
        self.pending: list[tuple[FuncVal, Scope, Optional[InstanceVal]]] = []
        # The text parsed, not module.code: that regenerates every node of the module.
        if ctx.call_counts is not None:
            self.callsites = CallSites(ctx.source, counts=ctx.call_counts)
        else:
            self.callsites = CallSites(ctx.parsed_text if ctx.line_map is not None and ctx.parsed_text is not None
                                       else ctx.module.code if ctx.line_map is not None else ctx.source,
                                       ctx.python_tree)
        self.memo: dict[ast.AST, dict[tuple[tuple[str, object], ...], tuple[dict[str, Value], Value]]] = {}
        self.inits: dict[int, FuncVal] = {}  # id(class) -> its __init__
        # Instances of another module's classes whose __init__ runs (quietly): it sets
        # their attributes (classes.py).
        self.building: list[InstanceVal] = []
        # The attributes the file assigns other than through a method's ``self``, once a
        # class asks (instances.outside_assignments).
        self.outside: list[Optional[frozenset[str]]] = []
        # (the call here, quiet level, helper depth) while another module's function runs
        # for a call of this file's own code: its transfers are this call's (emit).
        self.relay: Optional[tuple[Call, int, int]] = None
        # The calls being run, outermost first (functions.call_function), and where the
        # relayed run's own calls start among them: a relayed transfer's path.
        self.call_nodes: list[ast.AST] = []
        self.relay_calls_at = 0
        # (line, column) of calls whose arguments another module's analysis asks for
        # (foreign.py) -> the arguments at each evaluation; None: no such question
        self.recorder: Optional[dict[tuple[int, int], list[Call]]] = None
        self.fed_depth = 0  # > 0 inside a run fed by other modules' calls (run_function)
        self.relay_args: tuple[Value, ...] = ()  # the values its parameters were bound to
        self.relay_held: list[Event] = []  # its transfers, reported once its run ends (functions.py)
        self.relay_gaps: set[tuple[str, str]] = set()  # the functions it did not run (functions.unfollowed)
        # Tests, loops and handlers whose path the analysis could not decide, counted.
        self.undecided = 0
        self.stopped = ""
        self.ran: set[int] = set()  # ids of the functions whose own run is done
        self.returns: list[list[Value]] = []
        self.yields: list[tuple[ast.AST, list[Value]]] = []
        # A context manager's generator run to its yield: (its def, (value, set_mesh in force) per yield).
        self.managing: Optional[tuple[ast.AST, list[tuple[Value, Value]]]] = None
        self.rng_seeded: dict[str, Optional[bool]] = {"random": None, "numpy": None}
        self.token = 0
        self.current_name = ""  # canonical name of the function a handler is running for
        self.naming: tuple[ast.AST, str] | None = None
        # Functions and classes made, whose references close cycles (a scope binds a
        # function that closes over the scope; a class holds its methods, which name it).
        self.made: list[FuncVal | ClassVal | InstanceVal] = []
        # Lists and dicts stored as attributes (mutation.escape), which a change through an
        # attribute the analysis does not follow may change.
        self.escaped: list[SeqVal] = []
        self.module_scope: Scope | None = None
        self.filed = set()

    def release(self, keep_values: bool = False) -> None:
        """Break the cycles once the analysis is over: reference counting then frees the
        file's values and the trees they hold as soon as the caller lets go, where the
        cyclic collector would rescan them first (on the jax repository 770,000 objects
        in the main process of `check`). ``keep_values``: a summary exports functions
        another module calls; they, and the helpers and classes of the module they call,
        stay whole with the scope they close over."""
        for v in () if keep_values else self.made:
            if isinstance(v, FuncVal):
                v.scope = None
                v.owner = None
                v.defaults = {}
            elif isinstance(v, InstanceVal):
                v.attrs = {}
            else:
                v.attrs = {}
                v.instance = None
        self.made = []
        self.memo = {}

    def name_for(self, node: ast.AST) -> Optional[str]:
        if self.naming is not None and self.naming[0] is node:
            return self.naming[1]
        return None

    # -- driver ----------------------------------------------------------------------
    def run(self, module_only: bool = False) -> None:
        """``module_only``: the module body alone, for what it binds (a summary another
        module imports, project/summaries.py), not the functions' own runs."""
        module = self.ctx.module
        scope = self.module_scope = with_rebound(Scope(None, "module", count_bindings(module.body)), module.body)
        self.top_run = True
        try:
            if self.ctx.failures is None:
                self.exec_block(module.body, scope)
            else:
                # A failure of the analysis ends the module body there, as an exception of
                # the program's would: what follows is not run (coverage lists its sites
                # as not reached), and the functions defined before it still run.
                self.stopped = ""
                for stmt in module.body:
                    if not self.contained(stmt, lambda: self.exec_stmt(stmt, scope)) or self.stopped:
                        break
        finally:
            self.top_run = False
        for name in self.filed:
            # A function that runs later (its own run, below, or an importer's call) may
            # run before or after any of the module body's filings: it reads the name as
            # bound twice. (An importer reads it as the module left it: summaries.py.)
            scope.bindings[name] = max(2, scope.bindings.get(name, 0))
        if module_only:
            return
        self.global_context = self.context_mesh
        global_mesh_context = self.mesh_context
        global_site = self.context_site
        # Functions run after the module body, with module names at their final values,
        # each once every call of it has been seen (callers first), so its parameters
        # take what the callers pass. Where that order cannot be had (recursion, calls
        # the analysis does not follow), the first waiting function runs, and its
        # unseen callers make those parameters unknown.
        while self.pending:
            i = next((k for k, p in enumerate(self.pending) if self._ready(p[0])), None)
            if i is None:
                i = next((k for k, p in enumerate(self.pending) if self._after_init(p[0])), 0)
            func, parent, self_val = self.pending.pop(i)
            self.context_mesh = self.global_context
            self.mesh_context = global_mesh_context
            self.context_site = global_site
            if self.ctx.failures is None:
                self.run_function(func, parent, self_val)
            else:
                self.contained(func.node, lambda: self.run_function(func, parent, self_val))
            self.ran.add(id(func))

    def contained(self, node: ast.AST, run: Callable[[], None]) -> bool:
        """``run()``, whose failure (a bug of the analysis, not of the program) is noted at
        ``node`` (``ctx.failures``) with the interpreter put back as it was before it: its
        counters, flags and stacks (the functions and classes it made stay, for
        ``release``). The events it emitted before it failed stand: each was judged whole.
        False where it failed."""
        failures = self.ctx.failures
        assert failures is not None
        kept = {k: v for k, v in vars(self).items() if v is None or isinstance(v, (bool, int, str, tuple))}
        depths = {k: len(v) for k, v in vars(self).items() if type(v) is list and k != "made"}
        try:
            run()
            return True
        except Exception as exc:  # noqa: BLE001 - coverage lists what failed and goes on
            failures.append((node, f"{type(exc).__name__}: {exc}"))
            for k, v in kept.items():
                setattr(self, k, v)
            for k, n in depths.items():
                del getattr(self, k)[n:]
            return False

    def _ready(self, func: FuncVal) -> bool:
        return self._after_init(func) and self.callsites.ready(func)

    def _after_init(self, func: FuncVal) -> bool:
        """Methods run after __init__, so they see what it assigns."""
        if func.owner is None:
            return True
        if func.owner.fields is not None and not self.callsites.fields_ready(func.owner):
            return False
        init = self.inits.get(id(func.owner))
        return init is None or init is func or id(init) in self.ran

    def emit(self, event: Event) -> None:
        if not self.quiet:
            if self.fed_depth and foreign.elsewhere(self.ctx, event):
                return
            self.sink(event)
        elif self.relay is not None and isinstance(event, Transfer) and not event.coverage_only \
                and self.relaying(event):
            # A transfer of another module's function, run for a call here with this
            # call's arguments: reported at the call (functions.py), naming the argument
            # it moves when it moves one as it is.
            call = self.relay[0]
            moved = next((arg_value(a) for v, a in (*call.positional, *call.keywords.values()) if v is event.value), None)
            ctx, inner = self.ctx, event

            def spelled() -> str:
                # Written out when a message needs it: the other module's line costs a
                # walk of that module's tree (positions.py).
                return f"{ctx.code(call.node, 40)}, through its {inner.spelled} at {ctx.at(inner.node)},"
            self.relay_held.append(replace(event, node=call.node, value_node=moved, target_node=None,
                                           through=event.node, through_value=event.value_node, func=spelled,
                                           path=tuple(self.call_nodes[self.relay_calls_at:])))
        elif self.relay is not None and isinstance(event, (MeshBuilt, ShardingBuilt)) \
                and self.relaying(event) and foreign.handed_in(self.ctx, event, self.relay_args):
            # A construction inside another module's function whose wrong part this call
            # hands it: reported at the call (a factory stays silent on its own, since its
            # parameter is unknown there).
            self.relay_held.append(replace(event, node=self.relay[0].node, through=event.node))

    def new_token(self, node: ast.AST) -> str:
        self.token += 1
        # Values imported from another module carry that module's tokens: its path keeps
        # two different shuffles from reading as one.
        return f"{self.token}" if self.ctx.project is None else f"{self.ctx.path}:{self.token}"

    # -- statements ------------------------------------------------------------------
    def exec_block(self, stmts: Sequence[ast.stmt], scope: Scope) -> None:
        # What follows a return, raise, break or continue the run reached (straight on or
        # through ifs it decided) does not run: ``if isinstance(p, dict): return ...``
        # leaves the rest to other calls. A compound statement whose paths the analysis
        # joins (exec_stmt) clears it: the code after it runs on the paths that go on.
        self.stopped = ""
        for stmt in stmts:
            self.exec_stmt(stmt, scope)
            if self.stopped:
                return

    def exec_stmt(self, stmt: ast.stmt, scope: Scope) -> None:
        t = type(stmt)
        if not isinstance(stmt, COMPOUND):
            self.undecided += t is ast.Assert
            self.exec_small(stmt, scope)
        elif isinstance(stmt, ast.If):
            taken = none_test(stmt.test, scope)
            if taken is None:
                taken = truth(self.eval(stmt.test, scope))
            if taken is None:
                self.undecided += 1
                self.exec_branches(scope, [stmt.body, stmt.orelse])
                self.stopped = ""
            else:
                self.exec_block(stmt.body if taken else stmt.orelse, scope)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self.undecided += t is ast.While
            self.exec_loop(stmt, scope)
            self.stopped = ""
        elif t is ast.Try or t.__name__ == "TryStar":
            self.undecided += 1
            # ast.TryStar (Python 3.11, not a class on 3.10) has Try's fields
            self.exec_try(cast(ast.Try, stmt), scope)
            self.stopped = ""
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.exec_with(stmt, scope)
            if self.stopped != "return":
                self.stopped = ""  # a context manager may swallow what its body raises
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.exec_def(stmt, scope)
        elif isinstance(stmt, ast.ClassDef):
            self.exec_class(stmt, scope)
        elif isinstance(stmt, ast.Match):
            self.undecided += 1
            self.eval(stmt.subject, scope)
            blocks = [c.body for c in stmt.cases] + [[]]
            self.exec_branches(scope, blocks)
            self.stopped = ""

    def exec_def(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope,
                 self_val: InstanceVal | None = None) -> None:
        owner = self_val.cls if self_val is not None else None
        fn = FuncVal(stmt, scope, self.defaults(stmt.args, scope), owner, home=self.home_now)
        self.made.append(fn)
        func: Value = fn
        for dec in reversed(stmt.decorator_list):
            d = self.eval(dec, scope)
            if isinstance(d, MeshDecoratorVal):
                fn.context = d.context
            func = self.apply_decorator(d, func, dec)
        scope.vars[stmt.name] = func
        self.pending.append((fn, scope, self_val))

    def _name_lambda(self, stmt: ast.Assign, fn: FuncVal, scope: Scope) -> None:
        """``put = lambda x: ...`` bound once in a function or the module: its calls are
        counted as a def's, and its body runs once every call was seen, with what the
        calls pass (its events are reported there, as a def's are)."""
        target = stmt.targets[0]
        if len(stmt.targets) != 1 or type(target) is not ast.Name or scope.kind not in ("module", "function") \
                or scope.bindings.get(target.id) != 1:
            return
        fn.name = target.id
        self.pending.append((fn, scope, None))

    def defaults(self, params: ast.arguments, scope: Scope) -> dict[str, Value]:
        """Default values, evaluated where the function is defined, as Python does."""
        out: dict[str, Value] = {}
        positional = [*params.posonlyargs, *params.args]
        for p, default in zip(positional[len(positional) - len(params.defaults):], params.defaults):
            out[p.arg] = self.eval(default, scope)
        for p, kw_default in zip(params.kwonlyargs, params.kw_defaults):
            if kw_default is not None:
                out[p.arg] = self.eval(kw_default, scope)
        return out

    def run_function(self, func: FuncVal, parent: Scope, self_val: Optional[InstanceVal]) -> None:
        # A run fed by other modules' calls (foreign.py), or by calls made in such a run:
        # its transfers are those calls' to report (their relays), not this module's.
        fed = func.node in self.callsites.fed
        self.fed_depth += fed
        try:
            self._run_function(func, parent, self_val)
        finally:
            self.fed_depth -= fed

    def _run_function(self, func: FuncVal, parent: Scope, self_val: Optional[InstanceVal]) -> None:
        fn = func.node
        assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        body = fn.body if isinstance(fn, FUNCTIONS) else []
        scope = with_rebound(Scope(parent if parent.kind != "class" else parent.parent, "function",
                                   self._param_bindings(fn.args, count_bindings(body)), fn), body)
        params = self._param_names(fn.args)
        scope.vars.update(self.callsites.parameters(func, params))
        is_method = self_val is not None and params and isinstance(fn, FUNCTIONS) and not any(
            type(d) is ast.Name and d.id in ("staticmethod", "classmethod")
            for d in fn.decorator_list)
        if is_method and self_val is not None:  # (is_method says it is)
            scope.vars[params[0]] = self_val
        elif self_val is not None:
            # A static or class method: its call sites bind the parameters differently.
            for p in params:
                scope.vars[p] = unknown(NO_CALL_SITE, parameter(p, func_name(func)))
        if func.context is not None:
            # Run by its decorator under jax.set_mesh(mesh), given mesh=mesh.
            self.context_mesh = func.context.mesh
            self.context_site = func.context
            self.mesh_context = True
            if "mesh" in params:
                scope.vars["mesh"] = func.context.mesh
        else:
            shared = self.callsites.context(func)
            if shared is not None and shared[0] is not self.context_mesh:
                # Every call runs it under one context mesh (a jitted function traced there,
                # a helper called there): its bare PartitionSpecs place on that mesh. Its
                # operations meet the context at the call (contextmesh.jit_call), so no
                # context site here, as for a lambda run at its call.
                self.context_mesh, self.mesh_context = shared
                self.context_site = UNKNOWN
        if type(fn) is ast.Lambda:  # bound to a name (_name_lambda)
            self.eval(fn.body, scope)
            return
        self.returns.append([])
        self.exec_block(body, scope)
        self.returns.pop()
        self.stopped = ""

    def _param_names(self, params: ast.arguments) -> list[str]:
        out = [p.arg for p in params.posonlyargs]
        out += [p.arg for p in params.args]
        if params.vararg is not None:
            out.append(params.vararg.arg)
        out += [p.arg for p in params.kwonlyargs]
        if params.kwarg is not None:
            out.append(params.kwarg.arg)
        return out

    def _param_bindings(self, params: ast.arguments, bindings: dict[str, int]) -> dict[str, int]:
        for name in self._param_names(params):
            # A parameter is one binding: stable for closures unless the body rebinds it.
            bindings[name] = bindings.get(name, 0) + 1
        return bindings

    def exec_small(self, small: ast.stmt, scope: Scope) -> None:
        if isinstance(small, ast.Assign):
            targets = small.targets
            value_node = small.value
            if len(targets) == 1 and type(targets[0]) in (ast.Name, ast.Attribute):
                # Meshes are reported as they are built, before the assignment names them.
                target = targets[0]
                self.naming = (value_node, target.id if type(target) is ast.Name
                               else self.ctx.code(target, 40))
            value = self.eval(value_node, scope)
            for target in targets:
                self.bind(target, value, scope)
            if type(value_node) is ast.Lambda and isinstance(value, FuncVal):
                self._name_lambda(small, value, scope)
        elif isinstance(small, ast.AnnAssign):
            if small.value is not None:
                self.bind(small.target, self.eval(small.value, scope), scope)
        elif isinstance(small, ast.AugAssign):
            left = self.eval(small.target, scope)
            right = self.eval(small.value, scope)
            mutation.changed(left)  # a list's += extends it in place
            result = self.binop(small, left, right, small.op, small.target, small.value)
            self.bind(small.target, result, scope)
        elif isinstance(small, ast.Expr):
            self.eval(small.value, scope)
        elif isinstance(small, ast.Return):
            val = self.eval(small.value, scope) if small.value is not None else ConstVal(None)
            if self.returns:
                self.returns[-1].append(val)
            self.stopped = "return"
        elif isinstance(small, ast.Import):
            for alias in small.names:
                if alias.asname is not None:
                    self._bind_import(alias.asname, alias.name, scope)
                else:
                    top = alias.name.split(".")[0]
                    self._bind_import(top, top, scope)
        elif isinstance(small, ast.ImportFrom):
            mod = small.module
            if small.level:
                # Resolved against this file's package when it is a project module.
                project = self.ctx.project
                mod = project.absolute(small.level, mod) if project is not None else None
            if mod is None:
                return
            if small.names[0].name == "*":
                if self.ctx.project is not None:
                    for name, value in self.ctx.project.star(mod).items():
                        scope.vars[name] = value
                return
            for alias in small.names:
                local = alias.asname if alias.asname is not None else alias.name
                self._bind_import(local, f"{mod}.{alias.name}", scope)
        elif isinstance(small, ast.Delete):
            for target in small.targets:
                for n in names_in_target(target):
                    scope.vars[n] = UNKNOWN
            for target in small.targets:
                for item in _deleted_items(target):
                    mutation.changed(self.eval(item.value, scope))
        elif isinstance(small, ast.Raise):
            if small.exc is not None:
                self.eval(small.exc, scope)
            self.stopped = "raise"
        elif isinstance(small, (ast.Break, ast.Continue)):
            self.stopped = "jump"
        elif isinstance(small, ast.Assert):
            self.eval(small.test, scope)
            if small.msg is not None:
                self.eval(small.msg, scope)

    def _bind_import(self, local: str, qual: str, scope: Scope) -> None:
        scope.vars[local] = QualVal(qual)
        if scope.kind == "module":
            self.ctx.spellings.setdefault(qual, local)
            # `import jax` lets the file spell every jax.* name.
            self.ctx.spellings.setdefault("module:" + qual, local)

    def bind(self, target: ast.expr, value: Value, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            name = target.id
            if isinstance(value, (MeshVal, ShardingVal, ArrayVal)) and value.name is None:
                value.name = name
            wrapped = value.func if isinstance(value, (JitVal, PartialVal, TransformVal)) else None
            if isinstance(wrapped, FuncVal):
                self.callsites.alias(wrapped, name)  # calls of `name` are calls of the function
            scope.vars[name] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            starred = any(type(e) is ast.Starred for e in elements)
            if isinstance(value, SeqVal) and len(value.items) == len(elements) and not starred:
                for el, item in zip(elements, value.items):
                    self.bind(el, item, scope)
            elif isinstance(value, HostVal):
                # Rows of host data, keys of jax.random.split(key): host data and
                # uncommitted arrays like the whole.
                for el in elements:
                    el = _unstarred(el)
                    self.bind(el, placement.host_element(self, value, el), scope)
            elif ordered(value) and not starred:
                # d1, d2 = jax.local_devices()[:2]: the first devices (rows of a grid); on a
                # topology with another count Python raises instead.
                for i, el in enumerate(elements):
                    self.bind(el, element(value, _constant(i), str(i), el, self.ctx.devices), scope)
            else:
                # x, z = res of a parameter nobody passes: each unknown for that reason.
                for el in elements:
                    self.bind(_unstarred(el), unknown_from(value), scope)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, UNKNOWN, scope)
        elif isinstance(target, ast.Attribute):
            base = target.value
            via_self = type(base) is ast.Name and base.id == "self"
            obj = self.eval(base, scope)
            if isinstance(obj, library.HolderVal):
                library.store(self, target, obj, value, scope)  # encoder.params = tree
                return
            mutation.escape(value, self.escaped)
            self.assign_attribute(obj, target.attr, value, via_self)
        elif isinstance(target, ast.Subscript):
            base_val = self.eval(target.value, scope)
            if self.store_item(target, base_val, value, scope) or self.store_global(target, base_val, value, scope):
                return
            mutation.changed(base_val)
            if not isinstance(base_val, (SeqVal, DevVal)):
                mutation.changed_somewhere(self.escaped)  # box.table["w"] = x: which table?
            if isinstance(base_val, DevVal):
                # devs[:] = ..., devs[0], devs[1] = devs[1], devs[0]: not followed.
                self.rebind_in_place(target.value, unknown(CONTAINER), scope)

    # -- expressions -----------------------------------------------------------------


def _constant(i: int) -> Callable[[Model], int]:
    """An index that is ``i`` on every topology."""
    return lambda m: i


def _unstarred(el: ast.expr) -> ast.expr:
    """An element of a tuple or list target: ``x`` of ``*x``."""
    return el.value if type(el) is ast.Starred else el


def _deleted_items(target: ast.expr) -> list[ast.Subscript]:
    """The ``d[k]`` of ``del d[k]`` (or of ``del a[0], (b[1], c[2])``)."""
    if type(target) is ast.Subscript:
        return [target]
    if type(target) is ast.Tuple or type(target) is ast.List:
        return [t for el in target.elts for t in _deleted_items(_unstarred(el))]
    return []


def iter_events(ctx: FileContext) -> Iterable[Event]:
    out: list[Event] = []
    Analyzer(ctx, out.append).run()
    return out
