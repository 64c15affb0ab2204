"""Shuffles and permutations, and whether every process agrees on them (seeds)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...core import vocabulary as api
from .registry import handles
from .. import devices as dv
from ..arguments import Call
from ..scope import Scope
from ..valueops import PerProcess, ordered
from ..values import (
    UNKNOWN, ConstVal, DevVal, IndexPermutation, IntVal, RngVal, Shuffle, Value, is_unknown, undecidable,
)

if TYPE_CHECKING:
    from ..interpreter import Analyzer


@handles("random.shuffle", api.NP_RANDOM_SHUFFLE)
def _shuffle_global(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "x")
    if ordered(v):
        which = "random" if an.current_name == "random.shuffle" else "numpy"
        shuffled = an.shuffled(v, node, an.rng_agreed(which), an.ctx.code(node, 50))
        an.rebind_in_place(call.arg_node(0, "x"), shuffled, scope)
    return ConstVal(None)


@handles(api.NP_RANDOM_PERMUTATION)
def _permutation(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "x")
    if ordered(v):
        return an.shuffled(v, node, an.rng_agreed("numpy"), an.ctx.code(node, 50))
    if isinstance(v, IntVal):
        return IndexPermutation(v, an.rng_agreed("numpy"), an.ctx.code(node, 50), node)
    return UNKNOWN


@handles("random.sample")
def _sample(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "population")
    if ordered(v):
        if an.is_full_sample(call, v, 1, "k"):
            return an.shuffled(v, node, an.rng_agreed("random"), an.ctx.code(node, 50))
        return DevVal(fn=undecidable, desc=an.ctx.code(node, 50), node=node)
    return UNKNOWN


def _seed_agreed(v: Value, given: bool) -> bool:
    if not given:
        return False
    if isinstance(v, PerProcess):
        return False
    return isinstance(v, (IntVal, ConstVal)) and not (isinstance(v, ConstVal) and v.value is None)


# Methods of a random generator (NumPy's ``default_rng``, ``Generator``, ``RandomState``;
# Python's ``random.Random``) that draw new numbers from arguments that are shapes,
# bounds and parameters, never arrays: their results are host data (NumPy arrays, Python
# numbers), whatever the generator's seed. Not ``choice``, ``sample``, ``permutation`` or
# ``shuffle``, which give back elements of what they are given (devices, arrays).
DRAWS = frozenset({
    "random", "integers", "standard_normal", "normal", "uniform", "standard_exponential", "exponential",
    "standard_gamma", "gamma", "beta", "binomial", "poisson", "lognormal", "laplace", "logistic", "gumbel",
    "multivariate_normal", "dirichlet", "multinomial", "standard_t", "bytes",
    "rand", "randn", "randint", "random_sample", "gauss", "normalvariate", "randrange", "getrandbits",
})


@handles("random.seed", api.NP_RANDOM_SEED)
def _seed(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    which = "random" if an.current_name == "random.seed" else "numpy"
    seed_v = call.arg(0, "a" if which == "random" else "seed")
    agreed = _seed_agreed(seed_v, call.given(0, "a" if which == "random" else "seed"))
    if isinstance(seed_v, Value) and is_unknown(seed_v):
        an.rng_seeded[which] = None  # unknown seed: neither agreed nor proven per-process
        return ConstVal(None)
    an.rng_seeded[which] = agreed
    return ConstVal(None)


@handles(api.NP_RANDOM_DEFAULT_RNG, "random.Random")
def _rng(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    seed_v = call.arg(0, "seed" if "default_rng" in (an.current_name) else "x")
    given = call.given(0, "seed") or call.given(0, "x")
    if given and is_unknown(seed_v):
        return UNKNOWN  # a seed we cannot see may be shared by all processes
    return RngVal(agreed=_seed_agreed(seed_v, given), desc=an.ctx.code(node, 40))


@handles("random.SystemRandom")
def _sysrng(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    return RngVal(agreed=False, desc=an.ctx.code(node, 40))


def permute_rows(an: Analyzer, base: DevVal, perm: IndexPermutation, node: ast.Subscript) -> Value:
    """``devs[perm]``: the first ``n`` rows of ``devs`` in a random order."""
    f, n = base.fn, perm.n.fn
    desc = f"{base.desc}[{perm.how}]"
    if an.ctx.devices.observe(f, base.sizes, lambda a: a.is_list) != {False}:
        # A Python list indexed by an integer array raises TypeError: no claim about devices.
        return DevVal(fn=undecidable, desc=desc, node=node, fresh=base.fresh, from_mesh=base.from_mesh)
    token = an.new_token(node)

    def permuted(m: dv.Model) -> dv.DevArr:
        a = f(m)
        k = n(m)
        if not 0 <= k <= len(a.rows()):
            raise dv.ModelError("permutation indices out of range")
        return a.slice0(0, k, 1).permuted(token)

    out = base.derive(permuted, desc, reorder=perm.how, step=(node, node.value))
    if not perm.agreed or base.shuffle is None:
        out.shuffle = Shuffle(node, desc, perm.agreed)
    return out
