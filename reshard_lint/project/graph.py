"""The import graph of a project, built on demand from the files that are asked about.

Each module is read and parsed once per graph (whatever the number of its importers); a
module that cannot be read or parsed has no imports and is marked broken, so its
importers see it as unknown, never as an error of theirs. Walks keep a visited set:
import cycles, a module importing itself and symlinked packages (one file, two names)
terminate.
"""

from __future__ import annotations

from typing import Callable, Iterator

from ..stages import newer_syntax
from .imports import Import, imports_of
from .modules import ModuleIndex


def _read(path: str) -> str:
    from ..core.sources import decode, read_bytes

    return decode(read_bytes(path), path).text


class ImportGraph:
    def __init__(self, index: ModuleIndex, read: Callable[[str], str] = _read) -> None:
        self.index = index
        self._read = read  # the language server reads open documents' unsaved text
        self._imports: dict[str, list[Import]] = {}
        self.broken: set[str] = set()  # modules that could not be read or parsed

    def imports(self, name: str) -> list[Import]:
        """The project imports of module ``name`` (empty for an unknown or broken one)."""
        if name not in self._imports:
            self._imports[name] = self._load(name)
        return self._imports[name]

    def _load(self, name: str) -> list[Import]:
        module = self.index.find(name)
        if module is None or module.path is None:
            return []
        from ..core.sources import SourceError

        try:
            tree = newer_syntax.parse(self._read(module.path))
        except (SourceError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            # An unreadable or unparsable module is unknown to its importers: never an
            # error of theirs.
            self.broken.add(name)
            return []
        return imports_of(tree, module, self.index)

    def dependencies(self, name: str) -> set[str]:
        """Every project module ``name`` imports, directly or not (``name`` itself only
        when a cycle leads back to it). Importing ``a.b`` runs ``a`` first: parents count."""
        seen: set[str] = set()
        todo = [name]
        while todo:
            for dep in self._direct(todo.pop()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen

    def _direct(self, name: str) -> Iterator[str]:
        for imp in self.imports(name):
            yield from _with_parents(imp.module)

    def importers(self, names: set[str], modules: list[str]) -> set[str]:
        """Which of ``modules`` import any of ``names``, directly or not: the files whose
        results an edit of ``names`` can change."""
        return {m for m in modules if self.dependencies(m) & names}


def _with_parents(name: str) -> Iterator[str]:
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        yield ".".join(parts[:i])
