"""The project layer: where a project's modules are and which of them import which.

Beside the analysis package, not inside it: it reads files and Python's tree (never
the analysis's) and knows nothing of devices or meshes. ``roots`` finds the project root and its
import roots, ``modules`` maps dotted names to the project's files and back, ``imports``
reads what a module imports from the project, ``graph`` follows those imports across
the project without looping on cycles. Installed packages are never part of a project:
a name the import roots do not hold is outside it.
"""

from .graph import ImportGraph
from .imports import Import, imports_of
from .modules import ModuleFile, ModuleIndex
from .roots import Layout, find_root, layout_for

__all__ = ["ImportGraph", "Import", "imports_of", "ModuleFile", "ModuleIndex", "Layout", "find_root",
           "layout_for"]
