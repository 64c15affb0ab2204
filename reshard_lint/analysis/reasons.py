"""Why a value is unknown, in the words ``reshard-lint coverage`` shows users.

Unknown values carry one of these (values.Unknown); the coverage report counts
unresolved transfer sites by them, so a user sees what the analysis could not see.
"""

from __future__ import annotations

from typing import Any, Optional

from ..core import vocabulary as api
from .callsites import CALLED_ELSEWHERE, DISAGREE, ESCAPES, FOREIGN_VALUE, NO_CALL_SITE, RECURSIVE, STAR, UNSEEN_CALLS
from .values import PATHS

IMPORTED = "a name imported from another module"
PACKAGE_CALL = "a result of a function from another module or package"
UNMODELLED_JAX = "a result of a JAX API the analysis does not model"
UNKNOWN_OBJECT = "an attribute or method of an object the analysis does not know"
UNFOLLOWED_CALL = "a result of a call the analysis does not follow"
CONTAINER = "an element of a container the analysis does not know"
ATTRIBUTE = "an attribute assigned in more than one place"
ATTRIBUTE_LATER = "an attribute read before the method that assigns it ran"
ATTRIBUTE_ELSEWHERE = "an attribute the class's own methods do not assign"
CONFIG = "a value read from configuration or the command line"
COMMITTED_OPERAND = "a computation on an array whose placement the analysis does not know"
COMPUTED_LAYOUT = "a computed array whose layout the analysis does not know, put on its devices in another order"
MESH_CONTEXT = "an array made under a mesh context"
NOT_REACHED = "a call the analysis did not run (a callback it does not follow, an expected-error block)"
NOT_COMPARABLE = "two meshes whose comparison is not certain on every topology"
OTHER = "a value the analysis does not model"
EXPECTED_ERROR = "a transfer between two meshes in a block that expects an error"
# Fetches (coverage): an array on a known mesh whose pieces the analysis cannot place on
# the processes, or one split across processes that no rule reports there.
SPLIT_UNKNOWN = "an array whose split across processes the analysis does not know"
SPLIT_UNREPORTED = "a fetch of an array split across processes, on a path that one process may run alone"
# A site no rule judges yet (coverage): what it does is named, not claimed.
NOT_JUDGED = "a call the analysis counts but does not judge"
CALLBACK_DATA = "the data a callback gives each shard, which the analysis does not run"
NOT_OWN_DEVICE = "a device the analysis does not know to be this process's own"
# A field of another package's object that keeps it (library.py), after a change the
# analysis does not follow (a store through an attribute, a method, handing it on ...).
LIBRARY_CHANGED = "a field of another package's object, changed where the analysis does not follow it"
# Code the analysis did not run because it failed before it (coverage lists the failure).
AFTER_FAILURE = "a call the analysis did not run because it failed before it (an internal error)"

__all__ = [
    "AFTER_FAILURE", "LIBRARY_CHANGED", "CALLBACK_DATA", "NOT_JUDGED", "NOT_OWN_DEVICE", "SPLIT_UNKNOWN", "SPLIT_UNREPORTED",
    "ATTRIBUTE", "ATTRIBUTE_ELSEWHERE", "CALLED_ELSEWHERE", "ATTRIBUTE_LATER", "CONFIG", "COMMITTED_OPERAND", "COMPUTED_LAYOUT", "CONTAINER", "DISAGREE", "ESCAPES", "EXPECTED_ERROR", "FOREIGN_VALUE", "IMPORTED",
    "MESH_CONTEXT",
    "NOT_COMPARABLE", "NOT_REACHED", "NO_CALL_SITE", "OTHER", "PACKAGE_CALL", "PATHS", "RECURSIVE", "STAR",
    "UNFOLLOWED_CALL", "UNKNOWN_OBJECT", "UNMODELLED_JAX", "UNSEEN_CALLS", "named", "outside_reason",
]

_CONFIG_ROOTS = ("os.environ", "os.getenv", "sys.argv", "argparse", "absl.flags", "flags.", "config", "cfg")


def outside_reason(qual: str) -> str:
    """Why the result of calling ``qual`` (a qualified name the models do not know) is unknown."""
    if qual.startswith(api.JAX_PREFIX) or qual == api.JAX:
        return UNMODELLED_JAX
    if any(qual.startswith(r) for r in _CONFIG_ROOTS):
        return CONFIG
    return PACKAGE_CALL


def named(qual: str, project: Any) -> str:
    """``qual`` (a qualified name the analysis stopped at) with where it comes from, for
    the culprit of an unknown: ``flax.nnx.state (flax, not modelled)``, or
    ``mypkg.meshes.build (project module mypkg.meshes)`` for a name of the project's own
    modules (``project``: the file's project view, None when it has none)."""
    module: Optional[str] = project.module_of(qual) if project is not None else None
    if module is not None:
        return f"{qual} (project module {module})"
    top = qual.split(".", 1)[0]
    return f"{qual} ({top}, not modelled)" if project is not None or top == api.JAX else f"{qual} ({top})"

