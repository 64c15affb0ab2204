"""For the gate: the names a file imports from its project that may hold device values.

The prefilter and the ast gate skip a file whose own code builds no devices or mesh
(gate.py); with imports followed, a file that only uses ``TRAIN`` and ``ROLLOUT`` from
``mypkg.mesh`` can have a finding. This finds, from the text alone, the names imported
from project modules that those modules may bind, at module level, to a value built
from devices (what the analysis follows across modules), directly or re-exported, so
that such a file goes to the engine whole. It says yes too often (an assignment the
text cannot place, a word in a value), never no to a name the analysis could resolve;
the standard library only: the gate runs where the engine is not imported.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, TypeVar

from ..core.vocabulary import VALUE_WORDS
from .defs import call_bindings, callable_names, config_classes, device_functions, moving_functions
from .module_scan import IDENT, any_value, bindings, code_names, import_lines, per_content, star_imports
from .modules import MODELLED, ModuleFile
from .registries import may_file_into, registry_names

if TYPE_CHECKING:
    from .view import FileView  # FileView._summary calls this module: no import at run time

_NAME = re.compile(r"(\w+)(?:\s+as\s+(\w+))?")
_DEPTH = 4  # re-exports followed through at most this many modules
T = TypeVar("T")


def device_imports(source: str, view: FileView) -> frozenset[str]:
    """Local names bound by imports of project modules that may hold device values; a
    module imported whole whose attributes may be such values is named with a trailing
    dot (``meshes.``) and with each such attribute read (``meshes.make_mesh``), a star
    import as ``*``; a function that moves arrays a second time, marked ``>``
    (``replicate>``)."""
    out: set[str] = set()
    index = view.project.index
    froms, imports = import_lines(source)
    for dots, module, names in froms:
        base = view.absolute(len(dots), module or None) if dots else module
        if not base or base.split(".")[0] in MODELLED or index.find(base) is None:
            continue
        source_mod = index.find(base)
        if names.strip() == "*":
            if source_mod is not None and _binds_any(view, source_mod, _DEPTH):
                out.add("*")
            continue
        for name, alias in _NAME.findall(names.strip("()")):
            if name == "import":
                continue
            sub = index.find(f"{base}.{name}")
            if sub is not None:
                # a module: its attributes may be device values
                out |= _device_attributes(source, alias or name, view, sub)
            elif source_mod is not None and _exports(view, source_mod, name, _DEPTH):
                out.add(alias or name)
                if _moves(view, source_mod, name, _DEPTH):
                    out.add((alias or name) + ">")  # a call of it places what it is given (gate.py)
    for module, alias in imports:
        if module.split(".")[0] in MODELLED:
            continue
        mod = index.find(module)
        if mod is not None:
            out |= _device_attributes(source, alias, view, mod)
    return frozenset(out)


def _device_attributes(source: str, local: str, view: FileView, mod: ModuleFile) -> set[str]:
    """``{local., local.X, ...}`` for the attributes X that ``source`` reads of the module
    ``mod`` (imported whole as ``local``) and that it may bind to a device value; empty
    when there is none."""
    attrs: set[str] = set()
    needle = local + "."
    i = source.find(needle)
    while i >= 0:  # str.find, not a lookbehind regex: that tries every position of the file
        if i == 0 or not (source[i - 1].isalnum() or source[i - 1] in "_."):
            m = IDENT.match(source, i + len(needle))
            if m is not None:
                attrs.add(m.group(0))
        i = source.find(needle, i + len(needle))
    found = {f"{local}.{a}" for a in sorted(attrs) if _exports(view, mod, a, _DEPTH)}
    found |= {f"{name}>" for name in found if _moves(view, mod, name[len(needle):], _DEPTH)}
    return found | {needle} if found else found


def _per_content(view: FileView, mod: ModuleFile, text: str, compute: Callable[[str], T]) -> T:
    return per_content(view.project.memo, mod.path, view.deps.get(mod.path or ""), text, compute)


def _module_imports(view: FileView, mod: ModuleFile, text: str) \
        -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    return _per_content(view, mod, text, import_lines)


def _text(view: FileView, mod: ModuleFile) -> str | None:
    """The module's text, recorded in ``view.deps``: a verdict read from it holds while
    it is unchanged (a cached rejection too)."""
    if mod.path is None:
        return None
    found = view.project.text(mod.path)
    if found is None:
        return None
    view.deps[mod.path] = found[1]
    return found[0]


def _bindings(view: FileView, mod: ModuleFile, text: str) -> dict[str, list[str]]:
    """The module-level assignments of a module (a line in column 0, or one level into a
    module-level ``if``, ``try`` or ``with`` block: guarded.py): each target name with
    the right-hand sides bound to it, continuation lines included. One scan per module
    and content."""
    return _per_content(view, mod, text, bindings)


def files_registry(view: FileView, mod: ModuleFile, name: str) -> bool:
    """Is ``name`` a dict ``mod``'s functions file into (registries.py)? Its importers
    need the full summary: the functions filed in it run where they are called."""
    text = _text(view, mod)
    return text is not None and _registry(view, mod, text, name)


def _registry(view: FileView, mod: ModuleFile, text: str, name: str) -> bool:
    # Python's tree of the module only where its text may bind and subscript the name.
    return may_file_into(text, name) and name in _per_content(view, mod, text, registry_names)


def calls_function(view: FileView, mod: ModuleFile, name: str) -> bool:
    """Is ``name`` one of ``mod``'s functions (or a name it binds to a call, a jitted
    function: ``defs.callable_names``), or one of its classes that may give a device value
    or its dataclasses (defs.py)? Its importers then need the module's summary with those
    functions' and classes' bodies."""
    text = _text(view, mod)
    return text is not None and (name in _per_content(view, mod, text, callable_names)
                                 or name in _per_content(view, mod, text, device_functions)
                                 or name in _per_content(view, mod, text, config_classes))


def reexports_callable(view: FileView, mod: ModuleFile, name: str, depth: int = _DEPTH) -> bool:
    """Does ``mod`` bind ``name`` by importing it (``from .meshes import train_mesh``, or
    ``from .meshes import *``: a package's ``__init__.py``) from a project module where
    it is a function or class an importer calls (``calls_function``), there or re-exported
    again? Its importers then ask that module for it, through ``mod``'s summary."""
    text = _text(view, mod)
    if text is None or depth < 0:
        return False
    inner = view.of(mod)
    for dots, module, names in _module_imports(view, mod, text)[0]:
        star = names.strip() == "*"
        taken_names = [name] if star else [taken for taken, alias in _NAME.findall(names.strip("()"))
                                            if (alias or taken) == name and taken != "import"]
        if not taken_names:
            continue
        base = inner.absolute(len(dots), module or None) if dots else module
        source = view.project.index.find(base) if base and base.split(".")[0] not in MODELLED else None
        if source is None or source == mod:
            continue
        for taken in taken_names:
            if view.project.index.find(f"{base}.{taken}") is not None:
                continue  # a module, not a name it binds
            if calls_function(view, source, taken) or reexports_callable(view, source, taken, depth - 1):
                return True
    return False


def binds_call(view: FileView, mod: ModuleFile, name: str) -> bool:
    """Does ``mod`` bind ``name`` once at module level to a call (defs.call_bindings): a
    jitted function an importer calls, or a mesh it reads?"""
    text = _text(view, mod)
    return text is not None and name in _per_content(view, mod, text, call_bindings)


# A module-level value an importer can read as it is: numbers (a tuple of them, literal
# arithmetic), a string of one literal, True or False.
_CONSTANT = re.compile(r"\s*(?:[-+*/%()\d_., ]+|'[\w .:/-]*'|\"[\w .:/-]*\"|True|False)\s*(?:#[^\n]*)?")


_CONSTRUCTION = re.compile(r"\s*(\w+)\(\)\s*(?:#[^\n]*)?")


def exports_constant(view: FileView, mod: ModuleFile, name: str) -> bool:
    """Does ``mod`` bind ``name`` once at module level to a literal constant
    (``NUM_DEVICES = 4``, ``SHAPE = (2, 4)``, ``AXIS = 'data'``), or define it as a
    dataclass (``Config``, whose field defaults an importer reads)? Not a device value,
    so not the gate's (``exports_value``): the importing file passes the gate by its own
    devices; its summary then holds the value."""
    text = _text(view, mod)
    if text is None:
        return False
    if name in _per_content(view, mod, text, config_classes):
        return True
    values = _bindings(view, mod, text).get(name, ())
    if len(values) == 1 and (made := _CONSTRUCTION.fullmatch(values[0])) is not None:
        return made.group(1) in _per_content(view, mod, text, config_classes)  # CONFIG = MeshConfig()
    if len(values) != 1:
        return False
    if any(c.isdigit() or c in "'\"TF" for c in values[0]) and _CONSTANT.fullmatch(values[0]) is not None:
        return True
    return any(c in values[0] for c in "([{") and literal_container(values[0])


# What a literal container may hold besides literals: the builtins whose calls of literal
# arguments the interpreter holds as values (``slice(4, 8)``, ``range(0, 4)``).
_LITERAL_CALLS = frozenset({"slice", "range"})


def literal_container(rhs: str) -> bool:
    """Is ``rhs`` (an assignment's value as written, continuation lines included) a tuple,
    list, set or dict of literals (``{"learner": slice(0, 4), "actor": slice(4, 8)}``,
    ``(("data", 2), ("model", 4))``), nested? Its importers read it as the interpreter
    holds it, where the module's summary exports it (summaries.exportable)."""
    import ast

    if len(rhs) > 4000:
        return False
    try:
        tree = ast.parse(rhs.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # (a value the text cut short, or not Python: not read here)
    return type(tree) in (ast.Tuple, ast.List, ast.Set, ast.Dict) and _literal(tree)


def _literal(node: object) -> bool:
    import ast

    if type(node) is ast.Constant:
        return True
    if type(node) in (ast.Tuple, ast.List, ast.Set):
        elements = node.elts  # type: ignore[attr-defined]
        return all(type(e) is not ast.Starred and _literal(e) for e in elements)
    if type(node) is ast.Dict:
        return all(type(k) is ast.Constant for k in node.keys) and all(_literal(v) for v in node.values)
    if type(node) is ast.UnaryOp:
        return _literal(node.operand)
    if type(node) is ast.BinOp:
        return _literal(node.left) and _literal(node.right)
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in _LITERAL_CALLS \
        and not node.keywords and all(type(a) is not ast.Starred and _literal(a) for a in node.args)


def _moves(view: FileView, mod: ModuleFile, name: str, depth: int) -> bool:
    """Is ``name`` of ``mod`` a function that moves arrays (defs.moving_functions), there or
    re-exported from another project module?"""
    text = _text(view, mod)
    if text is None or depth < 0:
        return False
    if name in _per_content(view, mod, text, moving_functions):
        return True
    inner = view.of(mod)
    for dots, module, names in _module_imports(view, mod, text)[0]:
        for taken, alias in _NAME.findall(names.strip("()")):
            if (alias or taken) != name or taken == "import":
                continue
            base = inner.absolute(len(dots), module or None) if dots else module
            source = view.project.index.find(base) if base and base.split(".")[0] not in MODELLED else None
            if source is not None and source != mod and _moves(view, source, taken, depth - 1):
                return True
    return False


def exports_value(view: FileView, mod: ModuleFile, name: str) -> bool:
    """May ``mod`` bind ``name`` at module level to a device value (see ``_exports``)?
    Memoized per project and module content."""
    return _exports(view, mod, name, _DEPTH)


def _exports(view: FileView, mod: ModuleFile, name: str, depth: int, seen: frozenset[str] = frozenset()) -> bool:
    """May ``mod`` bind ``name`` at module level to a device value: an assignment whose
    value names devices, meshes, shardings or transfers (or another such name of the
    module), a function or class whose body names them (defs.py), or a re-export of one."""
    text = _text(view, mod)
    if text is None or depth < 0 or name in seen:
        return False
    key = ("exports", mod.path, name, view.deps.get(mod.path or ""))
    memo = view.project.memo
    if key in memo and not seen:
        return bool(memo[key])  # (a bool: the memo holds other kinds of values under other keys)
    found = _exports_uncached(view, mod, text, name, depth, seen | {name})
    if not seen:
        memo[key] = found
    return found


def _exports_uncached(view: FileView, mod: ModuleFile, text: str, name: str, depth: int,
                      seen: frozenset[str]) -> bool:
    if _registry(view, mod, text, name):
        return True  # a dict the module's functions file into (registries.py)
    if name in _per_content(view, mod, text, device_functions):
        return True  # a function whose body builds or moves device values (defs.py)
    for rhs in _bindings(view, mod, text).get(name, ()):
        if any(w in rhs for w in VALUE_WORDS):
            return True
        # ``X = handlers.X`` through a module imported whole: that module's X, not
        # whether it binds anything (an alias of a class read as a device value made
        # every importer of pytree_checkpoint_handler.py summarise it).
        for head, attr in _ATTRIBUTE.findall(rhs):
            sub = _module_named(view, mod, text, head)
            if sub is not None:
                if _exports(view, sub, attr, depth - 1):
                    return True
            elif head not in seen and _exports(view, mod, head, depth, seen):
                return True
        rest = set(IDENT.findall(_ATTRIBUTE.sub(" ", rhs))) - seen
        if any(_exports(view, mod, other, depth, seen) for other in rest):
            return True  # ALIAS = TRAIN
    froms, imports = _module_imports(view, mod, text)
    if not any(name in names or names.strip() == "*" for _, _, names in froms) \
            and not any(alias == name for _, alias in imports):
        return False
    index = view.project.index
    inner = view.of(mod)
    for dots, module, names in froms:
        if name not in names and names.strip() != "*":
            continue
        base = inner.absolute(len(dots), module or None) if dots else module
        if not base or base.split(".")[0] in MODELLED:
            continue
        source = index.find(base)
        if source is None:
            continue
        if names.strip() == "*":
            if _exports(view, source, name, depth - 1):
                return True
            continue
        for taken, alias in _NAME.findall(names.strip("()")):
            if (alias or taken) != name:
                continue
            sub = index.find(f"{base}.{taken}")
            if sub is not None:
                return _binds_any(view, sub, depth - 1)
            if _exports(view, source, taken, depth - 1):
                return True
    for module, alias in imports:
        if alias == name and module.split(".")[0] not in MODELLED:
            sub = index.find(module)
            if sub is not None and _binds_any(view, sub, depth - 1):
                return True
    return False


def star_sources(view: FileView, mod: ModuleFile) -> list[str]:
    """The project modules ``mod``'s top-level ``from m import *`` lines name (absolute)."""
    text = _text(view, mod)
    if text is None:
        return []
    inner = view.of(mod)
    out: list[str] = []
    for dots, module in _per_content(view, mod, text, star_imports):
        base = inner.absolute(len(dots), module or None) if dots else module
        if base and base.split(".")[0] not in MODELLED and view.project.index.find(base) is not None:
            out.append(base)
    return out


def star_source(view: FileView, mod: ModuleFile, name: str) -> str | None:
    """The module whose ``name`` a top-level ``from m import *`` of ``mod`` binds there
    (``from .meshes import *`` in a package's ``__init__.py``), or None: ``mod`` must not
    name ``name`` anywhere else in its text (a binding of its own, a later assignment),
    and exactly one of its star imports may bind it (its module names it, or imports
    another with a star). Absolute; the caller asks that module for the name."""
    text = _text(view, mod)
    if text is None or name.startswith("_"):
        return None
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    if word.search(text) and (name in _per_content(view, mod, text, code_names) or not _per_content(
            view, mod, text, code_names)):
        return None  # named in its code (a comment or string is no binding), or unreadable
    inner = view.of(mod)
    found: list[str] = []
    for dots, module in _per_content(view, mod, text, star_imports):
        base = inner.absolute(len(dots), module or None) if dots else module
        if not base:
            return None  # a star import that cannot be followed may bind it
        source = view.project.index.find(base)
        if base.split(".")[0] in MODELLED or source is None:
            return None
        source_text = _text(view, source)
        if source_text is None:
            return None
        if word.search(source_text) or _per_content(view, source, source_text, star_imports):
            found.append(base)
    return found[0] if len(found) == 1 else None


# ``head.attr`` in a value (not ``x.head.attr``: a chain's head is its first name).
_ATTRIBUTE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.([A-Za-z_]\w*)")


def _module_named(view: FileView, mod: ModuleFile, text: str, head: str) -> ModuleFile | None:
    """The project module ``mod`` imports whole as ``head`` (``from pkg import sub``,
    ``import pkg.sub as head``), or None."""
    froms, imports = _module_imports(view, mod, text)
    index = view.project.index
    for dots, module, names in froms:
        if head not in names:
            continue
        base = view.of(mod).absolute(len(dots), module or None) if dots else module
        if not base or base.split(".")[0] in MODELLED:
            continue
        for taken, alias in _NAME.findall(names.strip("()")):
            if (alias or taken) == head:
                return index.find(f"{base}.{taken}")
    for module, alias in imports:
        if alias == head and module.split(".")[0] not in MODELLED:
            return index.find(module)
    return None


def _binds_any(view: FileView, mod: ModuleFile, depth: int) -> bool:
    """May any module-level name of ``mod`` be a device value (read as ``m.X`` through a
    module imported whole)?"""
    text = _text(view, mod)
    if text is None or depth < 0:
        return False
    key = ("any", mod.path, view.deps.get(mod.path or ""))
    memo = view.project.memo
    if key in memo:
        return bool(memo[key])
    memo[key] = False  # a cycle of modules importing each other: no
    found = any_value(text)
    if not found:
        inner = view.of(mod)
        for dots, module, names in _module_imports(view, mod, text)[0]:
            base = inner.absolute(len(dots), module or None) if dots else module
            if not base or base.split(".")[0] in MODELLED:
                continue
            source = view.project.index.find(base)
            if source is None or source == mod:
                continue
            if any(taken != "import" and _exports(view, source, taken, depth - 1)
                   for taken, _ in _NAME.findall(names.strip("()"))):
                found = True
                break
    memo[key] = found
    return found
