"""The text test every file takes before Python parses it: may the ast gate say yes?

Every finding needs a device list or a mesh built in the file, so a file whose code
names none cannot have one. Past that, each of the gate's paths (gate.decide) needs a
word in the text: a mesh constructor (``Mesh``, ``make_mesh``), a ``NamedSharding``, a
``device_put``, or, for RSH104 alone, a device id (``.id``, ``.split``) and a list fresh
from ``jax.devices()`` indexed by something other than a literal position. The last one
is tested on the text too (``_fresh_list_indexed``): test files name ``jax.devices()[0]``
and ``str.split`` all the time, and on the jax repository 18 of its 166 files got this
far only to be parsed and walked for nothing (0.8 s of a 9.5 s run).

Each test here may say yes too often, never no where the gate says yes: when the text
is not plain enough to tell (an alias of ``devices``, a string holding a parenthesis in
the call, a comment inside it), it says yes.
"""

from __future__ import annotations

import re
from typing import Iterator

from ..core.vocabulary import (
    BUILDERS, DEVICE_SOURCE, DEVICE_STEM, FRESH_CALLS, GATE_WORDS, ID_WORDS, RANDOM_SPLIT,
)

# The words (core/vocabulary.py, derived from its groups of API words): a device source
# as code spells it (a call, an attribute, an import alias, a mesh builder; "devices" in
# prose alone is not one: on the jax repository 30 files (1.6 MB) say it only in
# docstrings and comments), the mesh builders whose names do not say "device", and the
# names the gate's paths other than RSH104's need (a mesh constructor, an alias of one
# names it too; a sharding; a transfer).
_BUILDERS = BUILDERS
_GATE_WORDS = GATE_WORDS
_ID_WORDS = ID_WORDS
_FRESH_WORD = min(FRESH_CALLS, key=len)  # "devices"; the others are it with a prefix ("local_")
_FRESH_PREFIX = max(FRESH_CALLS, key=len)[:-len(_FRESH_WORD)]


def prefilter(source: str) -> bool:
    # Substring tests, not one regex alternation: four times faster, and every file pays it.
    # Without a mesh: ``device_put``, an array committed to one device put on a device of
    # another process (RSH306); ``.id`` and ``.split``, a device id used as a position
    # (RSH104), though not jax.random.split (in 17 of the jax repository's test files the
    # only one).
    if DEVICE_STEM not in source and not any(w in source for w in _BUILDERS) or not any(w in source for w in DEVICE_SOURCE):
        return False  # every word but make_mesh names "device": most files are out after two scans
    if any(w in source for w in _GATE_WORDS):
        return True
    ids, split = _ID_WORDS  # ".id", ".split"
    return (ids in source or source.count(split) > source.count(RANDOM_SPLIT)) \
        and _fresh_list_indexed(source)


_CALL_OR_ALIAS = re.compile(r"\s*(\()|\s+as\b")
_STRING = re.compile(r"\"[^\"\\\n]*\"|'[^'\\\n]*'")
_LITERAL_INDEX = re.compile(r"\[\s*\d+\s*\]")  # the gate's ast.Constant; [-1] is not one
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_INDEXED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\[")


def _fresh_list_indexed(source: str) -> bool:
    """May a list fresh from devices()/local_devices() be indexed by a non-literal, as the
    gate's RSH104 path asks: ``jax.devices()[i]``, or ``devs[i]`` after ``devs = jax.devices()``?"""
    bound: set[str] = set()
    for start, end in _devices_words(source):
        after = _CALL_OR_ALIAS.match(source, end)
        assigned = _assigned(source, start)
        if after is None or after.group(1) is None:
            # ``from jax import devices as d``, ``d = jax.devices``: the gate follows such
            # an alias of the call, this test does not.
            if after is not None or assigned >= 0:
                return True
            continue
        end = _after_call(source, after.end())
        if end < 0:
            return True
        at = _skip_space(source, end)
        if source.startswith("[", at) and not _LITERAL_INDEX.match(source, at):
            return True
        if assigned >= 0:
            # Every identifier left of the ``=`` on that line may be the name bound
            # (annotations, ``self.``, a keyword argument's name too: more is safe).
            start = max(source.rfind("\n", 0, assigned), source.rfind(";", 0, assigned)) + 1
            bound.update(_IDENTIFIER.findall(source, start, assigned))
    if bound:
        for use in _INDEXED_NAME.finditer(source):
            if use.group(1) in bound and not _LITERAL_INDEX.match(source, use.end() - 1):
                return True
    return False


def _devices_words(source: str) -> Iterator[tuple[int, int]]:
    """Where ``devices`` or ``local_devices`` stands as a name of its own (not in
    ``skip_on_devices``). str.find, not a regex: a lookbehind makes the regex try every
    position (5x slower on the jax repository's test files)."""
    n = len(source)
    word, prefix = _FRESH_WORD, _FRESH_PREFIX
    i = source.find(word)
    while i >= 0:
        start = i - len(prefix) if source.startswith(prefix, i - len(prefix)) else i
        end = i + len(word)
        if (start == 0 or not _word_char(source[start - 1])) and (end == n or not _word_char(source[end])):
            yield start, end
        i = source.find(word, end)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _assigned(source: str, i: int) -> int:
    """Where the ``=`` is when the dotted name at ``i`` is what an assignment binds, across
    blanks, line breaks and opening parentheses; -1 when it is not."""
    k = i
    while True:  # back over the dotted name (``jax . devices`` too)
        while k > 0 and (source[k - 1].isalnum() or source[k - 1] == "_"):
            k -= 1
        j = k
        while j > 0 and source[j - 1] in " \t\\":
            j -= 1
        if j > 0 and source[j - 1] == ".":
            k = j - 1
            while k > 0 and source[k - 1] in " \t\\":
                k -= 1
            continue
        break
    while k > 0 and source[k - 1] in " \t\r\n\\(":
        k -= 1
    if k > 0 and source[k - 1] == "=" and (k < 2 or source[k - 2] not in "=!<>"):
        return k - 1
    return -1


def _after_call(source: str, i: int) -> int:
    """Where a call whose arguments start at ``i`` ends, or -1 when the text is not plain
    enough to tell (a string with quotes or escapes in it, a comment)."""
    depth = 1
    n = len(source)
    while i < n:
        c = source[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == '"' or c == "'":
            m = _STRING.match(source, i)
            if m is None:
                return -1
            i = m.end()
            continue
        elif c == "#":
            return -1
        i += 1
    return -1


def _skip_space(source: str, i: int) -> int:
    """Past blanks, line breaks, comments and closing parentheses: ``(jax.devices())[i]``
    indexes the call's list as well."""
    n = len(source)
    while i < n:
        c = source[i]
        if c in " \t\r\n\\)":
            i += 1
        elif c == "#":
            j = source.find("\n", i)
            i = n if j < 0 else j
        else:
            break
    return i
