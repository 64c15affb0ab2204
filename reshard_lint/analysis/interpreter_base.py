"""What the parts of the interpreter (expressions.py, comprehensions.py, calls.py,
functions.py, classes.py, flow.py) read of one another, declared for the type checker:
each part is a base class of ``interpreter.Analyzer`` and uses the attributes its
``__init__`` sets and the methods the other parts define. Nothing here runs: the
attributes are annotations only, and the methods are declared under ``TYPE_CHECKING``
(the real ones override them, and mypy checks that their signatures agree)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional, Sequence

if TYPE_CHECKING:
    from .arguments import Call
    from .callsites import CallSites
    from .context import FileContext
    from .events import Event
    from .scope import Scope
    from .values import ClassVal, FuncVal, InstanceVal, SeqVal, Value


class InterpreterBase:
    """The ``Analyzer`` as its parts see it (see the attributes in ``Analyzer.__init__``)."""

    ctx: FileContext
    sink: Callable[[Event], None]
    quiet: int
    inline_stack: list[ast.AST]
    home_now: Optional[str]
    context_mesh: Value
    mesh_context: bool
    context_site: Value
    global_context: Value
    expected_sink: Optional[Callable[[Event], None]]
    expecting: Optional[tuple[int, int]]
    pending: list[tuple[FuncVal, Scope, Optional[InstanceVal]]]
    callsites: CallSites
    memo: dict[ast.AST, dict[tuple[tuple[str, object], ...], tuple[dict[str, Value], Value]]]
    inits: dict[int, FuncVal]
    building: list[InstanceVal]
    outside: list[Optional[frozenset[str]]]
    relay: Optional[tuple[Call, int, int]]
    call_nodes: list[ast.AST]
    escaped: list[SeqVal]
    relay_calls_at: int
    relay_args: tuple[Value, ...]
    recorder: Optional[dict[tuple[int, int], list[Call]]]
    fed_depth: int
    relay_held: list[Event]
    relay_gaps: set[tuple[str, str]]
    managing: Optional[tuple[ast.AST, list[tuple[Value, Value]]]]
    undecided: int
    ran: set[int]
    returns: list[list[Value]]
    yields: list[tuple[ast.AST, list[Value]]]  # the generator being run, and what it yielded
    rng_seeded: dict[str, Optional[bool]]
    current_name: str
    made: list[FuncVal | ClassVal | InstanceVal]
    settling: bool
    inexact: int  # flow.py: > 0 where code runs other than once in order
    # Module-level names a function run as part of the module body filed an item into
    # (flow.store_global).
    filed: set[str]
    module_scope: Optional[Scope]
    top_run: bool
    plain_calls: int
    filings: int
    # Set by a return, raise, break or continue the run reached ('return', 'raise',
    # 'jump'): the rest of the block is not run (interpreter.exec_block).
    stopped: str
    unroll_weight: int  # flow.py: loops run per element (unroll.py)
    unroll_runs: int
    token: int  # counts the shuffles made (interpreter.new_token)

    if TYPE_CHECKING:
        # expressions.py
        def eval(self, node: Optional[ast.expr], scope: Scope) -> Value: ...

        # comprehensions.py
        def comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp, scope: Scope,
                          consumed: bool = False) -> Value: ...

        def bind_loop_target(self, target: ast.expr, it: Value, iter_node: ast.expr,
                             scope: Scope, default: Value) -> None: ...

        # functions.py
        def observe_call(self, func: FuncVal, call: Call, node: ast.AST, *, bound: Optional[Value] = None,
                         prefix: Sequence[Value] = (), extra_kwargs: Optional[dict[str, Value]] = None
                         ) -> Optional[dict[str, Value]]: ...

        def call_function(self, func: FuncVal, call: Call, node: ast.AST, *, bound: Optional[Value] = None,
                          prefix: Sequence[Value] = (), extra_kwargs: Optional[dict[str, Value]] = None
                          ) -> Value: ...

        def relayed(self, func: FuncVal, params: dict[str, Value], call: Call) -> Optional[Value]: ...

        def relaying(self, event: Event) -> bool: ...

        def unfollowed(self, func: FuncVal) -> None: ...

        def inline(self, func: FuncVal, params: dict[str, Value]) -> Value: ...

        def run_quietly(self, func: FuncVal, params: dict[str, Value]) -> Value: ...

        def apply_decorator(self, dec: Value, func: Value, node: ast.AST) -> Value: ...

        def managed(self, func: FuncVal, params: dict[str, Value]) -> Value: ...

        def run_callable(self, func: FuncVal, params: dict[str, Value], quiet: bool) -> Value: ...

        # classes.py
        def assign_attribute(self, obj: Value, attr: str, value: Value, via_self: bool) -> None: ...

        def assign_named_attribute(self, obj: Value, name: Value, value: Value) -> bool: ...

        def assign_some_attribute(self, obj: Value) -> None: ...

        def construct(self, cls: ClassVal, call: Call, node: ast.AST) -> Value: ...

        def field_value(self, cls: ClassVal, name: str) -> Value: ...

        def read_property(self, getter: FuncVal, instance: InstanceVal, node: ast.AST) -> Value: ...

        # interpreter.py
        def emit(self, event: Event) -> None: ...

        def new_token(self, node: ast.AST) -> str: ...

        def exec_block(self, stmts: Sequence[ast.stmt], scope: Scope) -> None: ...

        def exec_stmt(self, stmt: ast.stmt, scope: Scope) -> None: ...

        def exec_def(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope,
                     self_val: InstanceVal | None = None) -> None: ...

        def run_function(self, func: FuncVal, parent: Scope, self_val: Optional[InstanceVal]) -> None: ...

        def defaults(self, params: ast.arguments, scope: Scope) -> dict[str, Value]: ...

        def bind(self, target: ast.expr, value: Value, scope: Scope) -> None: ...

        def _param_names(self, params: ast.arguments) -> list[str]: ...

        def _param_bindings(self, params: ast.arguments, bindings: dict[str, int]) -> dict[str, int]: ...
