"""Canonical names for the JAX, numpy and stdlib functions the analysis understands.

Imports bind names to qualified names as the analysis walks the file (``import
jax.sharding as shd``, ``from jax import device_put as dp``), so aliases resolve
without a whole-file scope analysis; ``canonical`` folds the several public spellings
of one function into one key, by the table and prefixes of ``vocabulary.py``.
"""

from __future__ import annotations

from .vocabulary import ALIASES, JAX_RANDOM_PREFIX, JNP_KEY_PREFIX, JNP_PREFIX, NP_PREFIX, NUMPY_PREFIX


# Methods of list and dict (and NumPy arrays: sort) that change the object in place
# (analysis/mutation.py; slicing.py keeps the statements that call them).
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort",
    "reverse", "__setitem__", "__delitem__", "__iadd__", "__ior__",
})

BUILTINS = frozenset({"list", "tuple", "reversed", "sorted", "len", "set", "frozenset", "int", "range",
                      "enumerate", "zip", "map", "setattr", "delattr", "slice", "isinstance", "dict",
                      "property", "iter", "next", "round"})


def canonical(qual: str) -> str | None:
    hit = ALIASES.get(qual)
    if hit is not None:
        return hit
    if qual.startswith(JNP_PREFIX):
        return JNP_KEY_PREFIX + qual[len(JNP_PREFIX):]
    if qual.startswith(NUMPY_PREFIX):
        return NP_PREFIX + qual[len(NUMPY_PREFIX):]
    if qual.startswith(JAX_RANDOM_PREFIX):
        return qual
    return None
