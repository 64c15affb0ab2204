"""Cheap tests that decide which files need the libcst engine at all.

Every finding needs a device list or a mesh built in the file, so a file whose text
names none of them cannot have one. The ast pass then looks for the shapes that a
finding needs; it may say yes too often (the engine then finds nothing) but must
never say no to a file with a finding: the fixture suite and the benchmark's
comparison of flake8 and standalone diagnostics check that.
"""

from __future__ import annotations

import ast
import re

# A finding needs something that produces devices or a mesh ...
_DEVICE_SOURCE = re.compile(r"devices|device_set|make_mesh|create_device_mesh|create_hybrid_device_mesh")
# ... and something that builds or uses a mesh or sharding.
_MESH_USE = re.compile(r"Mesh|make_mesh|NamedSharding|mesh_utils|create_device_mesh")


def prefilter(source: str) -> bool:
    return _DEVICE_SOURCE.search(source) is not None and _MESH_USE.search(source) is not None


def may_have_findings(tree: ast.AST) -> bool:
    return True
