"""What a project module shows the files that import it, as one hash (mypy's interface hash).

A cached result of a file that read other project modules holds while they are
unchanged; with this hash it also holds when one of them changed in a way no importer
can see. An importer sees a module through two readings, both functions of its text:

- the gate's text tests (imported.py): the module-level assignments, the import lines,
  and whether some module-level line names devices;
- its summary (projects.py ``_summarise``): whether the text parses and is not nested too
  deeply, the module-level code with the bodies of the functions module-level code cannot
  reach blanked out (every line keeps its number), and the names functions declare
  ``global``.

The hash of those is the module's interface. An edit inside a function that module-level
code never calls changes none of them, so a warm ``check`` re-analyses only the module
itself; an edit that moves later lines does change it, because messages name the lines
where an imported mesh was built. The modules a module imports in turn are dependencies
of the importer's result of their own, each checked by its own interface.

Standard library only: a warm run decides here without importing libcst.
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Mapping

from .summaries import digest


def interface(text: str) -> str:
    from .. import newer_syntax
    from ..nesting import too_deep
    from .imported import _ANY_VALUE, _imports, bindings
    from .projects import _declared_global, _module_level_text

    froms, imports = _imports(text)
    gate = json.dumps([froms, imports, sorted(bindings(text).items()), bool(_ANY_VALUE.search(text))])
    try:
        tree = newer_syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        body = "\0unparsable"
    else:
        # Lines after the last module-level one hold no value an importer reads.
        body = "\0too deep" if too_deep(text, tree) is not None else _module_level_text(text, tree).rstrip()
    h = hashlib.blake2b(digest_size=16)
    for part in (gate, body, " ".join(sorted(_declared_global(text)))):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0\1")
    return h.hexdigest()


class Interfaces:
    """Interfaces of the project files one run reads, by path and content digest."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        self._known: dict[tuple[str, str], str | None] = {}

    def of(self, path: str, text_digest: str) -> str | None:
        """The interface of the file at ``path`` if its content still has this digest;
        None when it no longer has (or cannot be read)."""
        key = (path, text_digest)
        if key not in self._known:
            text = self._read(path)
            self._known[key] = interface(text) if text is not None and digest(text) == text_digest else None
        return self._known[key]

    def for_deps(self, deps: Mapping[str, str]) -> dict[str, str]:
        """The interfaces to store with a result computed from ``deps`` (path -> digest)."""
        out: dict[str, str] = {}
        for path, d in deps.items():
            found = self.of(path, d)
            if found is not None:
                out[path] = found
        return out

    def still_holds(self, deps: Mapping[str, str], interfaces: Mapping[str, str],
                    now: Mapping[str, str | None]) -> bool:
        """Whether a result computed from ``deps`` holds for the files' current contents
        (``now``: path -> digest): each file is unchanged, or changed with the same
        interface as the one stored for it."""
        for path, d in deps.items():
            current = now.get(path)
            if current == d:
                continue
            stored = interfaces.get(path)
            if current is None or stored is None or self.of(path, current) != stored:
                return False
        return True
