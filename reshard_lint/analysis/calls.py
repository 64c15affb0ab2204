"""Calls: methods of modelled values, jitted functions, helpers of the module, JAX APIs."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional, cast

from ..core import vocabulary as api
from . import contextmesh, devices as dv, library, mutation
from .arguments import Call
from .events import Site, Transfer, TransferKind
from .models import (
    HANDLERS, commitments, device_ids, fetches, host, placement, randomness, shard_map, transforms,
)
from .callsites import STAR
from .reasons import (
    CONTAINER, IMPORTED, MESH_CONTEXT, UNFOLLOWED_CALL, UNKNOWN_OBJECT, UNMODELLED_JAX, named, outside_reason,
)
from .interpreter_base import InterpreterBase
from .scope import Scope
from .tree import Arg, arg_keyword, arg_value, call_args
from .valueops import NO_KEY, const_int, dotted, label, literal_sizes, ordered, shape_fns, squeeze
from .values import (
    UNKNOWN, ArrayVal, ClassVal, ConstVal, DevVal, FuncVal, IndexPermutation, InstanceVal, IntVal, JitVal,
    PartialVal,
    HostVal, MeshVal, OwnShardingVal, QualVal, RngVal, SeqVal, ShardingVal, Shuffle, TransformVal, Unknown,
    Value,
    again, is_unknown, undecidable, unknown,
)
from ..stages.call_counts import TRACES
from ..core.qualnames import MUTATING_METHODS, canonical

_MAX_INLINE_DEPTH = 3

if TYPE_CHECKING:
    from .interpreter import Analyzer


class Calls(InterpreterBase):
    """Call evaluation for the interpreter."""

    def eval_Call(self, node: ast.Call, scope: Scope) -> Value:
        func_node = node.func
        # Methods on values the analysis models (devs.reshape(...), x.to_device(s) ...)
        if type(func_node) is ast.Attribute:
            recv = self.eval(func_node.value, scope)
            args = self._args(node, scope)
            if self.recorder is not None:
                self.record_call(node, args)
            method = func_node.attr
            if isinstance(recv, QualVal):
                return self.call_qual(f"{recv.qual}.{method}", args, node, scope)
            if method == "update" and type(func_node.value) is ast.Attribute \
                    and func_node.value.attr == "__dict__" and type(func_node.value.value) is ast.Name:
                self.assign_some_attribute(self.eval(func_node.value.value, scope))  # self.__dict__.update(kw)
            if isinstance(recv, DevVal) and method in MUTATING_METHODS:
                # devs.sort(...), devs.reverse(), devs.append(d): a device list changed in
                # place, not followed.
                self.rebind_in_place(func_node.value, unknown(CONTAINER), scope)
                return UNKNOWN
            return self.call_method(recv, method, args, node, scope)
        func = self.eval(func_node, scope)
        args = self._args(node, scope, consumed=isinstance(func, QualVal) and canonical(func.qual) in api.CONSUMING)
        if self.recorder is not None:
            self.record_call(node, args)
        if isinstance(func, QualVal):
            return self.call_qual(func.qual, args, node, scope)
        if self.ctx.coverage_sites is not None and type(func_node) is ast.Name \
                and func_node.id in fetches.SCALAR_FUNCTIONS and isinstance(func, Unknown) \
                and len(args.positional) == 1 and isinstance(args.arg(0), ArrayVal):
            # float(x) of an array (Python's float, which the analysis does not model): a
            # site for coverage; its value is what it was before.
            fetches.fetch(cast("Analyzer", self), args.arg(0), node, args.arg_node(0), func_node.id, scalar=True)
        return self.call_value(func, args, node, scope)

    def record_call(self, node: ast.Call, args: Call) -> None:
        """The arguments of a call another module's analysis asked for (foreign.py), at
        each evaluation: where it runs, this call's values there."""
        assert self.recorder is not None
        at = self.recorder.get((node.lineno, node.col_offset))
        # The run of the function that holds the call, with what its own callers pass
        # (joined), not a quiet one for one caller's result or a loop's settling pass.
        if at is not None and not self.quiet:
            at.append(args)

    def call_value(self, func: Value, args: Call, node: ast.Call, scope: Scope,
                   bound: Optional[Value] = None) -> Value:
        """Call a value the module defines: a function, a jitted function, a partial, a class."""
        if isinstance(func, FuncVal):
            return self.call_function(func, args, node, bound=bound)
        if isinstance(func, JitVal):
            return self.call_jit(func, args, node, bound=bound)
        if isinstance(func, TransformVal) and bound is None:
            self.enter(func, args, node)
            return transforms.results(func, args, node)
        if isinstance(func, PartialVal) and bound is None:
            if isinstance(func.func, QualVal) and canonical(func.func.qual) == api.JIT:
                return JitVal(node, func.kwargs.get("in_shardings", UNKNOWN),
                              func.kwargs.get("out_shardings", UNKNOWN), func=args.arg(0),
                              plain=not func.star and not func.args and len(args.positional) == 1
                              and not args.keywords and not args.has_star
                              and placement.keeps_placement(func.kwargs),
                              sharded=tuple(k for k in api.JIT_SHARDINGS if k in func.kwargs))
            if isinstance(func.func, FuncVal):
                return self.call_function(func.func, args, node, prefix=func.args, extra_kwargs=func.kwargs)
            if isinstance(func.func, QualVal) and func.made_by is not None:
                # put = partial(jax.device_put, device=s); put(x): jax.device_put(x, device=s)
                # called here (what it moves is this call's, its transfer this call's).
                return self.call_qual(func.func.qual, args.after(func.made_by, 1, func.kwargs), node, scope)
            return UNKNOWN
        if isinstance(func, ClassVal) and bound is None:
            return self.construct(func, args, node)
        # A function the analysis does not run may change what it is given, and another
        # package's object called may change itself (library.py).
        mutation.handed_on(args.handed(), self.assign_some_attribute)
        library.changed(func)
        if isinstance(func, Unknown) and func.reason:
            return again(func)
        return unknown(UNFOLLOWED_CALL, dotted(node.func) or "")

    def _hand(self, values: Iterable[Value]) -> None:
        mutation.handed_on(values, self.assign_some_attribute)

    def _args(self, node: ast.Call, scope: Scope, consumed: bool = False) -> Call:
        """``consumed``: the callee is a builtin that iterates a lone generator argument to
        its end where it is called (``tuple(place(v) for v in xs)``): that generator runs
        here, as a list comprehension does (comprehensions.py)."""
        out: list[tuple[Optional[str], Value, Arg]] = []
        for a in call_args(node):
            expr = arg_value(a)
            if consumed and type(expr) is ast.GeneratorExp and len(node.args) == 1 and expr is node.args[0]:
                v = self.comprehension(expr, scope, consumed=True)
            else:
                v = self.eval(expr, scope)
            out.append((arg_keyword(a), v, a))
        return Call(node, out)

    def call_method(self, recv: Value, method: str, call: Call, node: ast.Call, scope: Scope) -> Value:
        if method == "setattr" and is_unknown(recv):
            self._patched(call)  # monkeypatch.setattr(meshes, "TRAIN", half)
        if method == "split" and (parts := device_ids.split_name(recv, call.arg(0, "sep"), node,
                                                                 cast("Analyzer", self))):
            return parts
        if isinstance(recv, HostVal):
            return recv.again()  # a host array's methods stay on the host
        shard = commitments.method(cast("Analyzer", self), recv, method, node)
        if shard is not None:
            return shard
        if isinstance(recv, (OwnShardingVal, ShardingVal)) and method == "with_memory_kind":
            return recv  # the same devices in another memory
        if isinstance(recv, JitVal) and method in TRACES:
            # f.lower(x): traced with x as a call would be; the result is no array.
            self.enter(recv.func, call, node)
            return UNKNOWN
        if isinstance(recv, InstanceVal):
            if recv.attrs and method in recv.attrs:
                # A function this construction's __init__ assigned: no method, not bound.
                return self.call_value(recv.attrs[method], call, node, scope)
            return self.call_value(recv.cls.attrs.get(method, UNKNOWN), call, node, scope, bound=recv)
        if isinstance(recv, ClassVal):
            return self.call_value(recv.attrs.get(method, UNKNOWN), call, node, scope)
        if ordered(recv):
            return self.device_method(recv, method, call, node)
        if isinstance(recv, ArrayVal):
            if method == "to_device":
                target = call.arg(0, "device")
                self.transfer("to_device", node, recv, target, call.arg_node(-1),
                              call.arg_node(0, "device"), f"{self.ctx.code(node.func, 40)}")
                if isinstance(target, ShardingVal):
                    return ArrayVal(target, node)
                return UNKNOWN
            # (a method call: node.func is an Attribute)
            if method in contextmesh.ARRAY_METHODS and contextmesh.operands(
                    cast("Analyzer", self), node, [(recv, node.func.value)]):  # type: ignore[attr-defined]
                return UNKNOWN  # the computation fails under the context mesh
            if method in fetches.METHODS:
                return fetches.fetch(cast("Analyzer", self), recv, node, getattr(node.func, "value", None),
                                     f".{method}()")
            if method in fetches.SCALAR_METHODS and self.ctx.coverage_sites is not None:
                # A site for coverage (its value is what it was before: unknown, below).
                fetches.fetch(cast("Analyzer", self), recv, node, getattr(node.func, "value", None),
                              f".{method}()", scalar=True)
            if method in placement.SAME_ARRAY_METHODS:
                return recv
            if method in placement.ARRAY_METHODS:
                return placement.derived(recv, node, method in placement.TUPLES)
            if method == api.DEVICES_WORD:
                src = recv.sharding.mesh.devices if recv.sharding.mesh is not None else recv.sharding.device
                if src is not None:
                    return DevVal(fn=src.fn, desc=f"{label(recv)}.devices()", node=node, fresh=False,
                                  from_mesh=recv.sharding.mesh, sizes=src.sizes, is_set=True)
            return UNKNOWN
        if isinstance(recv, RngVal):
            if method in api.RNG_DRAWS:
                # rng.standard_normal((8, 16)): numbers drawn on the host.
                return HostVal(self.ctx.lazy_code(node, 40), node)
            target = call.arg(0, "x")
            if method == "permutation" and isinstance(target, IntVal):
                # rng.permutation(n): a shuffled range(n), for indexing a device array.
                return IndexPermutation(target, recv.agreed, self.ctx.code(node, 50), node)
            if method in ("permutation", "shuffle", "choice", "sample") and isinstance(target, DevVal) \
                    and not target.single:
                if method == "choice" and not self.is_full_sample(call, target, 1, "size"):
                    return UNKNOWN
                if method == "sample" and not self.is_full_sample(call, target, 1, "k"):
                    return UNKNOWN
                shuffled = self.shuffled(target, node, recv.agreed, self.ctx.code(node, 50))
                if method == "shuffle":
                    self.rebind_in_place(call.arg_node(0, "x"), shuffled, scope)
                    return ConstVal(None)
                return shuffled
            return UNKNOWN
        if is_unknown(recv) and method in MUTATING_METHODS:
            mutation.changed_somewhere(self.escaped)  # box.table.update(...): which table?
        if isinstance(recv, SeqVal) and method in MUTATING_METHODS:
            if not call.keywords and not call.has_star and mutation.no_change(method, call.values()):
                return ConstVal(None)
            mutation.changed(recv)
            return UNKNOWN
        if isinstance(recv, SeqVal) and method in ("values",) and recv.kind == "dict":
            return SeqVal(recv.items, "tuple", view=True)
        if isinstance(recv, SeqVal) and method == "items" and recv.kind == "dict" \
                and len(recv.keys) == len(recv.items) and not call.values():
            return SeqVal(tuple(SeqVal((ConstVal(k) if k is not NO_KEY else UNKNOWN, v))
                                for k, v in zip(recv.keys, recv.items)), "tuple", view=True)
        if isinstance(recv, MeshVal) and method in ("__enter__",):
            return recv
        if (of_unknown := placement.of_unknown(recv, method)) is not None:
            return of_unknown  # a.astype(...) of an array the analysis does not know: for its reason
        if isinstance(recv, library.HolderVal) and \
                (kept := library.method(cast("Analyzer", self), recv, method, call, node, self._hand)) is not None:
            return kept
        if is_unknown(recv):
            # A method of an object the analysis does not know may change what it is given.
            mutation.handed_on(call.handed(), self.assign_some_attribute)
            # (a method call: node.func is an Attribute)
            return unknown(UNKNOWN_OBJECT, f"{dotted(node.func) or '(...).' + method}()")
        return UNKNOWN

    def _jit_site(self, jit: JitVal, call: Call, node: ast.Call) -> None:
        """A call of a function jitted with shardings that makes no jit_in or jit_out
        transfer here (an argument or a sharding the analysis does not know, host data):
        a site for coverage (events.Site), with the arguments it moves and the sharding."""
        if not jit.sharded or self.ctx.coverage_sites is None:
            return
        out = "out_shardings" in jit.sharded
        target = jit.out_shardings if out else jit.in_shardings
        given = call.values()
        value: Value = SeqVal(tuple(given)) if not call.has_star else unknown(STAR)
        if out and self.mesh_context and not given:
            value = unknown(MESH_CONTEXT)  # made on the context mesh, which may not be the target's
        spelled = [arg_value(a) for _, a in (*call.positional, *call.keywords.values())]
        self.emit(Site(node=node, ctx=self.ctx, kind="jit_out" if out else "jit_in", value=value, target=target,
                       value_node=spelled[0] if len(spelled) == 1 and len(given) == 1 else None, target_node=None,
                       func=self.ctx.lazy_code(node.func, 40)))

    def device_method(self, recv: DevVal, method: str, call: Call, node: ast.Call) -> Value:
        f = recv.fn
        if method in ("reshape",):
            shape_v = call.positional[0][0] if len(call.positional) == 1 else SeqVal(
                tuple(v for v, _ in call.positional))
            fns = shape_fns(shape_v)
            if fns is None:
                return recv.derive(undecidable, recv.desc)
            # A part of the devices reshaped says nothing of the job's size (every_device).
            sizes = recv.sizes + (literal_sizes(shape_v) if dv.every_device(f) else ())
            return recv.derive(lambda m: f(m).reshape([g(m) for g in fns]), recv.desc, sizes=sizes)
        if method in ("flatten", "ravel", "tolist", "copy", "squeeze"):
            if method == "squeeze":
                return recv.derive(lambda m: squeeze(f(m)), recv.desc)
            return recv.derive(lambda m: f(m).ravel() if method != "copy" else f(m), recv.desc)
        if method == "transpose":
            axes = [const_int(v) for v, _ in call.positional]
            if len(axes) == 1 and isinstance(call.positional[0][0], SeqVal):
                axes = [const_int(v) for v in call.positional[0][0].items]
            if any(a is None for a in axes):
                return recv.derive(undecidable, recv.desc)
            ax = [a for a in axes if a is not None] or None  # (none is None here)
            return recv.derive(lambda m: f(m).transpose(ax), f"{recv.desc}.transpose()",
                               reorder=".transpose()")
        if method in ("swapaxes",):
            a, b = const_int(call.arg(0)), const_int(call.arg(1))
            if a is None or b is None:
                return recv.derive(undecidable, recv.desc)
            return recv.derive(lambda m: f(m).swapaxes(a, b), f"{recv.desc}.swapaxes({a}, {b})",
                               reorder=".swapaxes()")
        return UNKNOWN

    def call_jit(self, jit: JitVal, call: Call, node: ast.Call, bound: Optional[Value] = None) -> Value:
        # The compiled body sees the arguments' shardings: it runs with them.
        params = self.enter(jit.func, call, node, bound=bound)
        if contextmesh.jit_call(cast("Analyzer", self), jit, call, node):
            self._jit_site(jit, call, node)
            return UNKNOWN  # the call fails under the context mesh
        if jit.sharded and self.ctx.coverage_sites is not None and not _jit_transfers(jit, call):
            self._jit_site(jit, call, node)
        ins = jit.in_shardings
        for i, (v, arg) in enumerate(call.positional):
            if not isinstance(v, ArrayVal):
                continue
            target = ins
            if isinstance(ins, SeqVal):
                target = ins.items[i] if i < len(ins.items) else UNKNOWN
            if isinstance(target, ShardingVal):
                self.emit(Transfer(node=node, ctx=self.ctx, kind="jit_in", value=v, target=target,
                                   value_node=arg_value(arg), target_node=None,
                                   func=self.ctx.code(node.func, 40)))
        outs = jit.out_shardings if jit.context_specs is None \
            else shard_map.on_context(cast("Analyzer", self), jit, node)
        commitments.placed(cast("Analyzer", self), "jit_out", node, outs, None)
        if isinstance(outs, ShardingVal):
            for v, arg in call.positional:
                if isinstance(v, ArrayVal):
                    self.emit(Transfer(node=node, ctx=self.ctx, kind="jit_out", value=v, target=outs,
                                       value_node=arg_value(arg), target_node=None,
                                       func=self.ctx.code(node.func, 40)))
                    break
            # One sharding for every result: in the containers the body returns, when
            # the analysis knows them (``jax.tree.map(f, params)`` of a dict: a dict).
            returned = self.inline(jit.func, params) if isinstance(jit.func, FuncVal) and params is not None \
                and any(isinstance(v, SeqVal) for v in call.values()) else UNKNOWN
            return _placed(outs, node, returned)
        if isinstance(outs, SeqVal) and all(isinstance(o, ShardingVal) for o in outs.items):
            # (every item a ShardingVal: above) The results have the container of shardings'
            # structure (JAX matches them: a dict of shardings gives a dict of those keys).
            return SeqVal(tuple(ArrayVal(o, node) for o in outs.items),  # type: ignore[arg-type]
                          outs.kind, outs.keys)
        if jit.plain:
            src = placement.placed_on(call.values())
            if src is not None:
                # The body's return value gives the results' structure (a tuple to unpack),
                # a transformation's its own (argnums=(0, 1): a tuple of gradients).
                shape: Value = UNKNOWN
                if isinstance(jit.func, TransformVal):
                    shape = transforms.results(jit.func, call, node)
                elif params is not None:
                    shape = self.inline(jit.func, params)  # type: ignore[arg-type]
                return placement.results(src, node, shape)
            return placement.unplaced(call.values())
        return UNKNOWN

    def enter(self, func: Value, call: Call, node: ast.Call, bound: Optional[Value] = None
              ) -> Optional[dict[str, Value]]:
        """A function a transformation runs with these arguments: a def's call site is
        recorded (its own run sees it); a lambda, which has no run of its own, runs here."""
        if isinstance(func, TransformVal):
            if func.kind == "vmap":
                call = Call.of_values(node, [transforms.unbatched(v, node) for v, _ in call.positional]) \
                    if not call.keywords and not call.has_star else call
            self.enter(func.func, call, node)
            return None
        if not isinstance(func, FuncVal):
            return None
        params = self.observe_call(func, call, node, bound=bound)
        if params is not None and func.home is not None:
            # Another module's function: its call sites are there; traced with this
            # call's arguments, its transfers are this call's (functions.relayed).
            self.relayed(func, params, call)
        elif params is not None and type(func.node) is ast.Lambda:
            # The context mesh meets the call as a whole (contextmesh.jit_call), not
            # each traced operation of the body: one failure, reported once.
            site, self.context_site = self.context_site, UNKNOWN
            try:
                self.run_callable(func, params, quiet=False)
            finally:
                self.context_site = site
        return params

    # -- calls to known functions ----------------------------------------------------
    def call_qual(self, qual: str, call: Call, node: ast.Call, scope: Scope) -> Value:
        if self.ctx.project is not None:
            # m.make_mesh(2), m a project module imported whole: its function, run here.
            found = self.ctx.project.value(qual)
            if isinstance(found, (FuncVal, JitVal, ClassVal)):
                return self.call_value(found, call, node, scope)
        name = canonical(qual)
        if contextmesh.qual_call(cast("Analyzer", self), name or qual, call, node):
            return UNKNOWN  # the computation fails under the context mesh
        if name in fetches.FUNCTIONS:
            fetches.fetch(cast("Analyzer", self), call.arg(0), node, call.arg_node(0),
                          self.ctx.lazy_code(node.func, 30))
        elif qual in fetches.SCALAR_FUNCTIONS and self.ctx.coverage_sites is not None \
                and len(call.positional) == 1 and isinstance(call.arg(0), ArrayVal):
            fetches.fetch(cast("Analyzer", self), call.arg(0), node, call.arg_node(0),
                          self.ctx.lazy_code(node.func, 30), scalar=True)
        if name is None:
            held = library.called(cast("Analyzer", self), qual, call, node, scope, self._hand)
            if held is not None:
                return held  # another package's object that keeps what it is given
            if not qual.startswith(api.JAX_PREFIX) and qual != api.JAX and not mutation.unchanging(qual):
                mutation.handed_on(call.handed(), self.assign_some_attribute)
            if qual.startswith((api.LAX_PREFIX, api.NN_PREFIX)) and not call.has_star \
                    and (result := host.lax_result(cast("Analyzer", self), qual, call, node)) is not None:
                return result
            return unknown(outside_reason(qual), named(qual, self.ctx.project))
        handler = HANDLERS.get(name)
        if handler is not None:
            self.current_name = name
            result = handler(cast("Analyzer", self), call, node, scope)
            if result is UNKNOWN:
                result = _why(call, result, self.ctx.project)
            if not (is_unknown(result) and name.startswith(api.NP_PREFIX)):
                return result
        if name.startswith(api.JNP_KEY_PREFIX):
            return self.call_jnp(name, call, node)
        if name.startswith(api.NP_PREFIX):
            # NumPy computes on the host: whatever it is given, the result is host data.
            return HostVal(self.ctx.lazy_code(node, 40), node)
        if name.startswith(api.JAX_RANDOM_PREFIX):
            return host.random_result(cast("Analyzer", self), name, call, node)
        return unknown(UNMODELLED_JAX, named(name, self.ctx.project))

    def call_jnp(self, name: str, call: Call, node: ast.Call) -> Value:
        if not call.given(-1, "device"):
            return host.jnp_result(cast("Analyzer", self), name, call, node)
        target = call.arg(-1, "device")
        first = call.arg(0)
        commitments.placed(cast("Analyzer", self), "keyword", node, target,
                           call.arg_node(-1, "device"))
        if name in (api.JNP_ASARRAY, api.JNP_ARRAY) and isinstance(first, ArrayVal):
            self.transfer("asarray", node, first, target, call.arg_node(0),
                          call.arg_node(-1, "device"), self.ctx.code(node.func, 40))
        if isinstance(target, ShardingVal):
            return ArrayVal(target, node)
        return commitments.committed_to(target, node) or UNKNOWN  # jnp.zeros(n, device=d)

    def transfer(self, kind: TransferKind, node: ast.Call, value: Value, target: Value,
                 value_node: Optional[ast.AST], target_node: Optional[ast.AST],
                 func: str, *, has_global_shape: bool = False, untargeted: bool = False) -> None:
        event = Transfer(node=node, ctx=self.ctx, kind=kind, value=value, target=target,
                         value_node=value_node, target_node=target_node, func=func,
                         has_global_shape=has_global_shape, untargeted=untargeted,
                         repeated=self.unroll_weight > 1)
        if self.expecting is not None and self.expecting == (self.quiet, len(self.inline_stack)):
            # The first transfer an expected-error block runs (interpreter.exec_with):
            # reached, so coverage classifies it; the failure is the test's, not a finding.
            self.expecting = None
            event.expected_error = True
            self.expected_sink(event)  # type: ignore[misc]  # (set whenever expecting is)
            return
        self.emit(event)

    def shuffled(self, devs: DevVal, node: ast.AST, agreed: bool, how: str) -> DevVal:
        token = self.new_token(node)
        f = devs.fn
        out = devs.derive(lambda m: f(m).permuted(token), how, reorder=how)
        out.shuffle = Shuffle(node, how, agreed) if not agreed or devs.shuffle is None else devs.shuffle
        return out

    def _patched(self, call: Call) -> None:
        """pytest's ``monkeypatch.setattr(obj, "name", value)`` or ``("pkg.mod.NAME",
        value)``: the attribute is assigned, as ``obj.name = value`` would."""
        first, second = call.arg(0), call.arg(1)
        if len(call.positional) == 3:
            self.assign_named_attribute(first, second, call.arg(2))
        elif len(call.positional) == 2 and isinstance(first, ConstVal) and isinstance(first.value, str) \
                and "." in first.value:
            module, _, name = first.value.rpartition(".")
            self.assign_attribute(QualVal(module), name, second, False)

    def rebind_in_place(self, target: Optional[ast.AST], value: Value, scope: Scope) -> None:
        if type(target) is ast.Name:
            # Mutating a list that may be shared: only follow a plain local name.
            scope.vars[target.id] = value

    def is_full_sample(self, call: Call, devs: DevVal, index: int, kw: str) -> bool:
        k = call.arg(index, kw)
        node = call.arg_node(index, kw)
        if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "len":
            return True
        if isinstance(k, IntVal):
            f, g = devs.fn, k.fn
            # Sampling every device is a permutation; sampling fewer is a subset.
            for model in dv.models_for(devs.sizes):
                arr = self.ctx.devices.run(f, model)
                if arr is None:
                    continue
                try:
                    if g(model) != len(arr.rows()):
                        return False
                except Exception:  # noqa: BLE001
                    return False
            return True
        return False

    def rng_agreed(self, which: str) -> bool:
        return bool(self.rng_seeded.get(which))


def _placed(outs: ShardingVal, node: ast.AST, shape: Value) -> Value:
    """A jitted call's results with ``out_shardings=outs``: each leaf of the containers
    ``shape`` holds (a constant too) an array on ``outs``; one array where the containers
    are not known."""
    if isinstance(shape, SeqVal) and not shape.changed:
        return SeqVal(tuple(_placed(outs, node, item) for item in shape.items), shape.kind, shape.keys)
    if isinstance(shape, ConstVal) and shape.value is None:
        return shape  # no leaf
    return ArrayVal(outs, node)


def _why(call: Call, result: Value, project: object) -> Value:
    """A model's unknown result carries the reason (and culprit) of the first unknown argument."""
    for v, _ in call.positional:
        if isinstance(v, Unknown) and v.reason:
            return again(v)
    for v, _ in call.keywords.values():
        if isinstance(v, Unknown) and v.reason:
            return again(v)
    if call.positional and isinstance(call.positional[0][0], QualVal):
        qual = call.positional[0][0].qual
        return unknown(IMPORTED if qual.split(".")[0] != "jax" else UNMODELLED_JAX, named(qual, project))
    return result


def _jit_transfers(jit: JitVal, call: Call) -> bool:
    """Whether ``call_jit`` makes a jit_in or jit_out transfer for this call: an array
    argument with a known sharding to meet (as it tests below)."""
    ins = jit.in_shardings
    for i, (v, _) in enumerate(call.positional):
        if not isinstance(v, ArrayVal):
            continue
        target = ins.items[i] if isinstance(ins, SeqVal) and i < len(ins.items) else ins
        if isinstance(target, ShardingVal) or isinstance(jit.out_shardings, ShardingVal) and jit.context_specs is None:
            return True
    return False
