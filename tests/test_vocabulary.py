"""One vocabulary: every JAX, NumPy and flax API name reshard-lint knows is spelled in
``reshard_lint/core/vocabulary.py``, and the prefilter, the gate, the long-file stages,
the project layer and the models read it from there.

Read from Python's tree of each module: a string constant (not a docstring, not a piece
of an f-string, which is message text) that is a qualified name of the API (``jax.…``,
``numpy.…``, ``flax.…``, or a models' key ``np.…``/``jnp.…``, prefixes too) or one of the
prefilter's substring words is a spelling outside the vocabulary.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import reshard_lint
from reshard_lint.core import vocabulary as V

PACKAGE = Path(reshard_lint.__file__).parent
VOCABULARY = "core/vocabulary.py"
VOCABULARY_OBJECTS = "core/vocabulary_objects.py"  # its page of other packages' objects
# Strict mode stands apart: it imports none of the package's folders (test_architecture),
# and patches JAX's own objects by their names at run time.
SKIPPED_FOLDERS = ("runtime/",)
_QUALIFIED = re.compile(r"^(?:jax|jaxlib|numpy|flax|np|jnp)(?:\.[A-Za-z_]\w*)+\.?$")
PREFILTER_WORDS = frozenset({*V.DEVICE_SOURCE, *V.BUILDERS, *V.GATE_WORDS, *V.ID_WORDS, V.RANDOM_SPLIT})

# (module, string) -> why it is spelled there and not read from the vocabulary; a string
# of None: every one the module spells.
EXCEPTIONS: dict[tuple[str, str | None], str] = {
    # Labels, not API names: a Transfer's kind is a value of the Literal type TransferKind,
    # which mypy checks at each place that writes or compares one; it names the event
    # (a device_put-like move) and no code is matched against it. It reads like the API
    # word by choice: the kind of ``x.to_device(s)`` is "to_device", of jax.jit's
    # in_shardings "jit_in".
    ("analysis/events.py", "device_put"):
        "a Transfer's kind (TransferKind), the label of an event, which a Literal type spells; "
        "PUT_KINDS, the kinds that put an array on a target",
    ("analysis/models/transfers.py", "device_put"):
        "the Transfer kind the model reports (TransferKind, a Literal label)",
    ("analysis/events.py", "default_device"):
        "a coverage Site's kind (TransferKind), the label coverage prints for a jax.default_device scope",
    ("analysis/models/commitments.py", "default_device"):
        "the Site kind the model reports (TransferKind, a Literal label)",
    ("analysis/verdicts.py", "default_device"):
        "the Site kind a verdict is given for (TransferKind, a Literal label)",
}

# The models' own tables of API words that no stage reads: (module, table) -> (why it
# stays in the model, the words it shares with a stage's group only by spelling). A
# table whose words a stage also needs is built from the vocabulary's group instead
# (SHARED_TABLES below), so the two cannot drift.
MODEL_TABLES: dict[tuple[str, str], tuple[str, frozenset[str]]] = {
    ("analysis/models/placement.py", "ARRAY_METHODS"): (
        "jax.Array methods that compute on the array's devices: only the placement model "
        "reads them; transpose and swapaxes are also REORDERS, but there as calls that "
        "reorder a device list (np.transpose(devs)), a different finding",
        frozenset({"transpose", "swapaxes"})),
    ("analysis/models/placement.py", "ARRAY_ATTRS"): (
        "jax.Array attributes computed from it; T also reorders a device grid "
        "(REORDER_ATTRS), a different finding",
        frozenset({"T"})),
    ("analysis/models/placement.py", "TUPLES"): (
        "jnp functions returning several arrays (no .sharding of the whole); split is an "
        "ID word as str.split (RSH104), unrelated",
        frozenset({"split"})),
    ("analysis/models/placement.py", "NOT_ARRAYS"): (
        "jnp functions returning no array on the devices: the placement model's only",
        frozenset()),
    ("analysis/models/placement.py", "_JIT_KEEPS"): (
        "jax.jit options that leave placement to the arguments: the placement model's only",
        frozenset()),
    ("analysis/contextmesh.py", "ARRAY_METHODS"): (
        "jax.Array methods that compute under the context mesh: that model's only; "
        "transpose is a REORDERS call on a device list, a different finding",
        frozenset({"transpose"})),
    ("analysis/models/host.py", "_CREATION"): (
        "jnp creation functions (their arguments are shapes): the host model's only",
        frozenset()),
    ("analysis/models/host.py", "_KEY_ONLY"): (
        "jax.random functions whose only array is the key: the host model's only; split "
        "is an ID word as str.split (RSH104), which the gate tells from jax.random.split",
        frozenset({"split"})),
    ("analysis/models/builtins.py", "_PHYSICAL_KEYS"): (
        "device attributes in a sorted() key that order devices physically: the builtins "
        "model's only; process_index is also a carrying call and attribute (jax.process_index(), "
        "a device's), which the long-file stages keep on their own",
        frozenset({"process_index"})),
    ("analysis/scope.py", "BUILTINS"): (
        "Python's builtins, not JAX's API; list, map, reversed and sorted are REORDERS and "
        "SEED_CALLS words for what they do to a device list",
        frozenset({"list", "map", "reversed", "sorted"})),
    ("analysis/models/transforms.py", "_KEEPS"): (
        "keywords of grad and vmap that do not move anything: the transforms model's only "
        "(its keys are the TransformVal kinds, labels)",
        frozenset()),
}
# Model tables that a stage's group overlaps: read from the vocabulary (the test below
# checks they are its objects).
SHARED_TABLES = {
    ("analysis/models/fetches.py", "METHODS"): "FETCH_METHODS",  # ONE_MESH_USES
    ("analysis/models/commitments.py", "SHARD_ATTRS"): "SHARD_ATTRS",  # ONE_MESH_USES, CARRYING_ATTRS
    ("analysis/models/host.py", "_PLACEMENT"): "PLACEMENT_KEYWORDS",  # CARRYING_KEYWORDS
}


def _excepted(rel: str, text: str) -> bool:
    return (rel, text) in EXCEPTIONS or (rel, None) in EXCEPTIONS


def _modules() -> list[tuple[str, ast.AST]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in (VOCABULARY, VOCABULARY_OBJECTS) or rel.startswith(SKIPPED_FOLDERS):
            continue
        out.append((rel, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _spelled(tree: ast.AST) -> list[tuple[int, str]]:
    """The API names a module's code spells as string constants."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))  # a docstring
        elif isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)  # an f-string: message text
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and (_QUALIFIED.match(node.value) or node.value in PREFILTER_WORDS)]


def test_no_module_outside_the_vocabulary_spells_an_api_name() -> None:
    found = [f"{rel}:{line}: {text!r}" for rel, tree in _modules() for line, text in _spelled(tree)
             if not _excepted(rel, text)]
    assert not found, "API names spelled outside core/vocabulary.py:\n" + "\n".join(found)


def test_every_exception_is_still_needed() -> None:
    spelled = {rel: {text for _, text in _spelled(tree)} for rel, tree in _modules()}
    stale = [key for key in EXCEPTIONS if not (spelled.get(key[0]) if key[1] is None
                                               else key[1] in spelled.get(key[0], ()))]
    assert not stale, stale


def test_the_scan_sees_what_it_looks_for() -> None:
    tree = ast.parse('"""jax.devices"""\nx = "jax.sharding.Mesh"\ny = f"{x}.devices"\nz = "make_mesh"\n'
                     'w = "np.flip"\nv = "a jax.device_put call"\n')
    assert [t for _, t in _spelled(tree)] == ["jax.sharding.Mesh", "make_mesh", "np.flip"]


def test_the_prefilter_words_are_derived_from_the_vocabulary() -> None:
    from reshard_lint.stages import prefilter

    assert prefilter.DEVICE_SOURCE is V.DEVICE_SOURCE
    assert prefilter._BUILDERS is V.BUILDERS
    assert prefilter._GATE_WORDS is V.GATE_WORDS
    assert prefilter._ID_WORDS is V.ID_WORDS
    # The device sources as code spells them: every device call, device attribute and
    # mesh builder; a word prose uses too ("devices") only as a call, an attribute or
    # an import alias.
    words = V.DEVICE_CALLS | V.DEVICE_ATTRS | V.MESH_BUILDERS
    expected = set()
    for w in words:
        expected |= {f"{w}(", f".{w}", f"{w} as"} if w in V.PROSE_WORDS else {w}
    assert set(V.DEVICE_SOURCE) == expected
    assert set(V.BUILDERS) == {w for w in expected if V.DEVICE_STEM not in w} == set(V.MESH_BUILDERS)
    assert all(V.DEVICE_STEM in w for w in expected - set(V.BUILDERS))
    assert set(V.GATE_WORDS) == V.MESH_CTORS | {V.NAMED_SHARDING_WORD, V.DEVICE_PUT_WORD, V.CREATE_DEVICE_MESH} \
        | V.ONE_DEVICE_WORDS \
        | {f"{V.DEVICE_KEYWORD}="}
    assert set(V.ID_WORDS) == {"." + w for w in V.ID_ATTRS}
    # The prefilter spells no word of its own: its only letters are in its regular
    # expressions (Python's syntax: ``as``, brackets, strings).
    tree = ast.parse(Path(prefilter.__file__).read_text(encoding="utf-8"))
    compiled = {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args
                and isinstance(n.func, ast.Attribute) and n.func.attr == "compile"}
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef)) and n.body and isinstance(n.body[0], ast.Expr)}
    words_spelled = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                     and id(n) not in compiled and id(n) not in docstrings and re.search(r"[A-Za-z]{2}", n.value)]
    assert not words_spelled, words_spelled


def test_the_stages_read_the_vocabulary() -> None:
    from reshard_lint.frontends import coverage
    from reshard_lint.project import defs, module_text, modules, projects
    from reshard_lint.stages import components, gate_facts, slicing

    assert gate_facts.DEVICE_CALLS is V.DEVICE_CALLS and gate_facts.MESH_CTORS is V.MESH_CTORS
    assert gate_facts.ORIGINS is V.ORIGINS and gate_facts.REORDERS is V.REORDERS
    assert gate_facts._ONE_MESH_USES is V.ONE_MESH_USES
    assert components._CARRYING_CALLS is V.CARRYING_CALLS and components._CARRYING_ATTRS is V.CARRYING_ATTRS
    assert slicing._SEED_CALLS is V.SEED_CALLS and slicing._SEED_ATTRS is V.SEED_ATTRS
    assert defs.SOURCE_WORDS is V.SOURCE_WORDS and defs.MOVE_WORDS is V.MOVE_WORDS
    assert module_text._BUILD_WORDS is V.BUILD_WORDS
    assert modules.MODELLED is V.MODELLED_PACKAGES and coverage.TRANSFER_NAMES is V.TRANSFER_NAMES
    # A word the gate looks for is one the long-file stages keep.
    assert V.DEVICE_CALLS | V.MESH_CTORS | V.ORIGINS <= V.SEED_CALLS
    assert V.DEVICE_CALLS | V.MESH_CTORS <= V.CARRYING_CALLS


def test_the_models_register_canonical_names_of_the_vocabulary() -> None:
    from reshard_lint.analysis.models import HANDLERS
    from reshard_lint.core.qualnames import canonical

    canonical_names = set(V.ALIASES.values())
    assert set(HANDLERS) <= canonical_names, sorted(set(HANDLERS) - canonical_names)
    # Each public spelling folds into a key, and each key is its own canonical name
    # where it is spelled as one.
    for spelling, key in V.ALIASES.items():
        assert canonical(spelling) == key
        if key in V.ALIASES:
            assert V.ALIASES[key] == key


def _stage_words() -> set[str]:
    groups = (V.DEVICE_CALLS, V.DEVICE_ATTRS, V.MESH_CTORS, V.REORDERS, V.REORDER_ATTRS, V.ORIGINS,
              V.ORIGIN_KEYWORDS, V.ONE_MESH_USES, V.JNP_MAKERS, V.ID_ATTRS, V.CARRYING_CALLS,
              V.CARRYING_ATTRS, V.CARRYING_KEYWORDS, V.SEED_CALLS, V.SEED_ATTRS, V.SEED_KEYWORDS,
              V.TRANSFER_NAMES)
    return set().union(*groups)


def _table(rel: str, name: str) -> object:
    import importlib

    module = importlib.import_module("reshard_lint." + rel[:-3].replace("/", "."))
    return getattr(module, name)


def test_the_models_tables_share_no_stage_word_but_by_spelling() -> None:
    stage = _stage_words()
    wrong = []
    for (rel, name), (_, coincident) in MODEL_TABLES.items():
        table = _table(rel, name)
        words = set(table) | {w for v in table.values() for w in v} if isinstance(table, dict) else set(table)
        if words & stage != coincident:
            wrong.append((rel, name, sorted(words & stage), sorted(coincident)))
    assert not wrong, wrong


def test_the_shared_tables_are_the_vocabularys() -> None:
    from reshard_lint.analysis import contextmesh

    for (rel, name), group in SHARED_TABLES.items():
        assert _table(rel, name) is getattr(V, group), (rel, name)
    assert V.FETCH_METHODS | V.JNP_MAKERS | {V.ADDRESSABLE_SHARDS, V.ADDRESSABLE_DATA} <= V.ONE_MESH_USES
    assert V.ADDRESSABLE_SHARDS in V.SHARD_ATTRS
    assert V.PLACEMENT_KEYWORDS <= V.CARRYING_KEYWORDS
    # jnp.array/jnp.asarray leave x where it is: no fetch (the gate) and no computation
    # under the context mesh (the model).
    assert V.JNP_MAKERS <= contextmesh._NO_COMPUTATION
    assert contextmesh._NO_COMPUTATION & _stage_words() == V.JNP_MAKERS


def test_a_fixs_names_are_the_vocabularys() -> None:
    """The imports a fix adds name what the models key: ``from jax.sharding import Mesh``
    is ``jax.sharding.Mesh``."""
    assert V.MESH == f"{V.SHARDING_MODULE}.{V.MESH_WORD}"
    assert V.NAMED_SHARDING == f"{V.SHARDING_MODULE}.{V.NAMED_SHARDING_WORD}"
    assert V.PARTITION_SPEC == f"{V.SHARDING_MODULE}.{V.PARTITION_SPEC_WORD}"
    assert V.ALIASES[V.NAMED_SHARDING_SHORT] == V.NAMED_SHARDING
    assert V.ALIASES[V.PARTITION_SPEC_SHORT] == V.PARTITION_SPEC
    assert V.ALIASES[f"{V.SHARDING_MODULE}.{V.PARTITION_SPEC_ALIAS}"] == V.PARTITION_SPEC
    assert V.NP_PREFIX == V.NUMPY_ALIAS + "." and V.NUMPY_PREFIX == V.NUMPY_MODULE + "."
