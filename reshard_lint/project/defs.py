"""A module's functions and classes another module may call for a device value, from the
text alone (``device_functions``, the gate's), and every function it may call
(``callable_names``, the analysis's).

``from mypkg.meshes import make_mesh`` then ``make_mesh(2)``: the analysis runs the
function's body with the caller's arguments, as it runs a helper of the same file;
``Trainer(2)`` runs the class's ``__init__`` for that instance. Only a module-level
``def`` or ``class`` whose body builds devices counts (a device source, a mesh
constructor, or a module-level name bound to one: the gate's test, imported.py): such a
name gets the importing file analysed, and the module a summary that keeps those bodies
(module_text.py). A function that takes a mesh and builds a sharding on it does not: its
callers that have a mesh of their own pass the gate by it. A body the text cannot delimit
(a column-0 line inside a string) ends early: the function may then not count, which
loses a finding, never adds one; the engine asks the same test, so it agrees.

Standard library only: the gate runs where the engine is not imported.
"""

from __future__ import annotations

import re

from ..core.vocabulary import BUILD_WORDS, MOVE_WORDS, SOURCE_WORDS, VALUE_WORDS
from .module_scan import IDENT, bindings

# A module-level def; its body runs to the next line in column 0 that is not blank, a
# comment, or the closing parenthesis of a signature over several lines.
_DEF = re.compile(r"(?m)^(?:(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(|class[ \t]+(\w+)[ \t]*[(:])")
_NEXT_TOP = re.compile(r"(?m)^[^\s#)]")
# The words (core/vocabulary.py): what a value built from devices reads as (a device
# source, a mesh or sharding constructor, a transfer: VALUE_WORDS); what builds devices
# itself (SOURCE_WORDS: a function that only forwards a mesh it is given, as most
# functions that say "mesh" or "sharding", makes nothing its caller does not have); and
# what moves arrays (MOVE_WORDS: a function that puts what it is given on a mesh it is
# given can fail for one caller's arguments, functions.py runs it for each call).
_RETURNS = re.compile(r"\b(?:return[ \t]+(?!None\b)[^\s#]|yield\b)")
_SIGNATURE_END = re.compile(r"\)[^\n:]*:[ \t]*(?:#[^\n]*)?\n")
_PROSE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|#[^\n]*')


def moving_functions(text: str) -> frozenset[str]:
    """The functions of ``device_functions`` that move what they are given: a call of one
    places an array (the gate counts it as a placed array)."""
    return frozenset(_movers(text)) & device_functions(text) if "def" in text else frozenset()


def _movers(text: str) -> set[str]:
    """Functions whose bodies hand one of their parameters to a move (the array, or the
    target: ``device_put(x, NamedSharding(mesh, P()))``), or to another such function of
    the module (``place(v, sharding=target)``); a body that moves only what it makes
    itself (``device_put(jnp.array(True), sharding)``) moves nothing its caller gives.
    A body with branches counts too: the analysis follows a call of it where the call's
    values decide them (functions.relayed)."""
    bodies: dict[str, tuple[set[str], str]] = {}
    for m in _DEF.finditer(text):
        if m.group(1) is None:
            continue
        end = _SIGNATURE_END.search(text, m.end())
        if end is None:
            continue
        params = set(IDENT.findall(text[m.end(): end.start()])) - {"self", "cls"}
        nxt = _NEXT_TOP.search(text, end.end())
        bodies[m.group(1)] = (params, text[end.end(): nxt.start() if nxt is not None else len(text)])
    out: set[str] = set()
    # Module-level names bound to a move as a value (``to_actor = functools.partial(
    # jax.device_put, device=...)``, ``put = lambda a: jax.device_put(a, s)``), called or
    # handed on with a parameter (``jax.tree.map(to_actor, params)``): moves too.
    bound = tuple(sorted(name for name, rhs in bindings(text).items()
                         if len(rhs) == 1 and any(w in rhs[0] for w in _MOVE_NAMES)))
    words: tuple[str, ...] = (*MOVE_WORDS, *bound)
    for _ in range(3):  # through at most two helpers of the module
        more = {name for name, (params, body) in bodies.items() if name not in out and _hands(body, params, words)}
        if not more:
            break
        out |= more
        words = (*MOVE_WORDS, *bound, *(f"{name}(" for name in sorted(out)))
    return out


# The moves as names, also where they are not called: ``partial(jax.device_put, ...)``.
_MOVE_NAMES = tuple(w.rstrip("(") for w in MOVE_WORDS)


def _hands(body: str, params: set[str], words: tuple[str, ...]) -> bool:
    """Does a line of ``body`` call one of ``words`` (a helper's name as a name of its
    own, not ``obj.place(``) with one of ``params`` after it?"""
    for w in words:
        i = body.find(w)
        while i >= 0:
            if w in MOVE_WORDS or i == 0 or not (body[i - 1].isalnum() or body[i - 1] in "_."):
                line_end = body.find("\n", i)
                if not params.isdisjoint(IDENT.findall(body[i + len(w): line_end if line_end >= 0 else None])):
                    return True
            i = body.find(w, i + len(w))
    return False


def device_functions(text: str) -> frozenset[str]:
    """Names of the module-level functions that return something, and classes, whose
    bodies build device values: a device source or a mesh constructor, or a module-level
    name the module binds to one; and of the functions that return something and move
    what they are given (``jax.device_put``, a sharding constraint, ``reshard`` of a
    parameter, or onto one; or hand it to such a function of the module): a caller's
    arguments decide whether such a move fails (functions.py)."""
    if "def" not in text and "class" not in text:
        return frozenset()
    if not any(w in text for w in SOURCE_WORDS) and not any(w in text for w in _MOVE_NAMES):
        # No body says a source (nor can a module-level name bound to one: ``_held``) and
        # none moves: the walk below would add nothing, and it is most of the gate's text
        # tests of imported modules.
        return frozenset()

    held: set[str] | None = None  # module-level names bound to device values, when needed
    movers: set[str] | None = None  # _movers(text), when needed
    out: set[str] = set()
    for m in _DEF.finditer(text):
        eol = text.find("\n", m.end())
        nxt = _NEXT_TOP.search(text, eol + 1) if eol >= 0 else None
        # Its decorators with it: ``@partial(jax.jit, out_shardings=NamedSharding(TRAIN, P()))``.
        body = _decorators(text, m.start()) + text[m.end(): nxt.start() if nxt is not None else len(text)]
        if "#" in body or '"""' in body or "'''" in body:
            body = _PROSE.sub("", body)  # "jax.devices()" in a docstring builds nothing
        name = m.group(1) or m.group(2)
        if m.group(1) and _RETURNS.search(body) is None:
            continue  # gives its caller nothing (an assert_* helper): nothing to follow
        if any(w in body for w in SOURCE_WORDS):
            out.add(name)
            continue
        if m.group(1) and any(w in text for w in _MOVE_NAMES):
            if movers is None:
                movers = _movers(text)
            if name in movers:
                out.add(name)
                continue
        if held is None:
            held = _held(text)
        if held and not held.isdisjoint(IDENT.findall(body)):
            out.add(name)  # def batch(n): return jax.device_put(..., NamedSharding(TRAIN, ...))
    return frozenset(out)


def _held(text: str) -> set[str]:
    """The module-level names bound to a value built from devices: a device source or a
    mesh constructor, or one of these names (``STEP = jax.jit(f, out_shardings=
    NamedSharding(TRAIN, P()))``), through at most three bindings."""
    values = bindings(text)
    held = {name for name, rhs in values.items() if any(w in v for v in rhs for w in SOURCE_WORDS)}
    for _ in range(3):
        more = {name for name, rhs in values.items() if name not in held
                and any(not held.isdisjoint(IDENT.findall(v)) for v in rhs)}
        if not more:
            break
        held |= more
    return held


def _decorators(text: str, start: int) -> str:
    """The decorator lines right above the definition starting at ``start`` (a
    decorator's call may go on over lines), or ""."""
    first = start
    i = start
    while i > 0:
        begin = text.rfind("\n", 0, i - 1) + 1
        line = text[begin: i - 1]
        if not line.strip() or not (line[0] in "@)" or line[0].isspace()):
            break
        if line[0] == "@":
            first = begin
        i = begin
    return text[first: start]


# A module-level name bound to a call (``step = jax.jit(_step, out_shardings=...)``).
_CALL_BINDING = re.compile(r"\s*[A-Za-z_][\w.]*\s*\(")


def callable_names(text: str) -> frozenset[str]:
    """Names of the module-level functions (every ``def``), the classes that build
    shardings or move arrays (``building_classes``), and of the names bound once
    at module level to a call (``step = jax.jit(_step, out_shardings=...)``,
    ``call_bindings``): what an importer may call, whose call the analysis runs as it runs
    a function of the same file when the summary holds a function there
    (summaries.callable_export). Not the gate's: a function that builds no device value
    gives its caller nothing to pass the gate by (``device_functions``)."""
    out = {m.group(1) for m in _DEF.finditer(text) if m.group(1)} if "def" in text else set()
    return frozenset(out) | call_bindings(text) | building_classes(text)


def building_classes(text: str) -> frozenset[str]:
    """Names of the module-level classes whose bodies build a sharding or a mesh, or move
    arrays (``BUILD_WORDS``: ``NamedSharding(self.mesh, P())``, ``jax.device_put(...)``):
    an importer's instance of one (``Trainer(mesh)``) gives it the shardings and arrays
    its methods and properties make of what the construction passed. Not the gate's (a
    class that builds no devices gives nothing its caller does not have)."""
    if "class" not in text:
        return frozenset()
    out: set[str] = set()
    for m in _DEF.finditer(text):
        if m.group(2) is None:
            continue
        eol = text.find("\n", m.end())
        nxt = _NEXT_TOP.search(text, eol + 1) if eol >= 0 else None
        body = text[m.end(): nxt.start() if nxt is not None else len(text)]
        if any(w in body for w in BUILD_WORDS) and any(w in _PROSE.sub("", body) for w in BUILD_WORDS):
            out.add(m.group(2))
    return frozenset(out)


def call_bindings(text: str) -> frozenset[str]:
    """Names bound once at module level to a call: a jitted function, or a mesh."""
    if "(" not in text:
        return frozenset()
    return frozenset(name for name, values in bindings(text).items()
                     if len(values) == 1 and _CALL_BINDING.match(values[0]) is not None)


# A module-level class under a dataclass decorator (``@dataclass``, ``@dataclasses.dataclass(frozen=True)``,
# other decorators around it).
_DATACLASS = re.compile(r"(?m)^@(?:dataclasses\.)?dataclass\b[^\n]*\n(?:@[^\n]*\n)*class[ \t]+(\w+)")


def config_classes(text: str) -> frozenset[str]:
    """Names of the module-level dataclasses: a configuration an importer constructs
    (``cfg = Config()``) and reads fields of (``cfg.dp``), which the analysis follows as
    it follows a dataclass of the same file; its summary keeps their bodies."""
    return frozenset(_DATACLASS.findall(text)) if "dataclass" in text else frozenset()

