"""The note ``check -`` prints when standard input comes without ``--stdin-filename``.

Without a file name the text has no place in a project: the meshes, functions and callers
of the project's other modules are not read, so a finding that needs them is not made and
"No findings" would read as a clean bill. The exit status stays what the findings say; the
note only tells the user, on standard error, what was left out and how to include it.
"""

from __future__ import annotations

import ast
import os
from typing import Iterable


def _is_module(name: str, dirs: Iterable[str]) -> str | None:
    """The directory of ``dirs`` that holds the top-level module or package ``name``."""
    for d in dirs:
        if os.path.isfile(os.path.join(d, f"{name}.py")) or \
                os.path.isfile(os.path.join(d, name, "__init__.py")):
            return d
    return None


def project_imports(text: str, roots: Iterable[str]) -> list[str]:
    """The imports of ``text`` that name a module of the project (a relative import, or a
    top-level module or package under one of ``roots`` or their ``src/``), in order."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # RSH001 says why; nothing was analysed to leave out
    dirs: list[str] = []
    for r in roots:
        for d in (r, os.path.join(r, "src")):
            if os.path.isdir(d) and os.path.abspath(d) not in dirs:
                dirs.append(os.path.abspath(d))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")] if node.level else [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name and (name.startswith(".") or _is_module(name.split(".")[0], dirs)) and name not in found:
                found.append(name)
    return found


def stdin_note(text: str, roots: Iterable[str]) -> str | None:
    """The note for standard input read without a file name, or None when the text imports
    nothing of the project (a self-contained snippet loses nothing)."""
    names = project_imports(text, roots)
    if not names:
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"standard input was checked on its own: it imports {shown} from the project, whose "
            "modules were not used (their meshes, functions and callers), so findings that need "
            "them are missing; pass --stdin-filename PATH, the file's path in the project, to use them")
