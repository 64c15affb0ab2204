"""What a project module shows the files that import it, as a hash (mypy's interface hash).

A cached ``check`` result of a file that read other project modules holds while they are
unchanged; with these hashes it also holds when one of them changed in a way its
importers cannot see. An importer reads a module in two ways, both functions of its text:

- the gate's text tests (imported.py): the import lines, the module-level assignments,
  and whether some module-level line names devices, and where its code runs
  (stages/runtime_facts.py: what a conftest.py or an imported module says of one
  process, Pathways, jax.distributed). Every importer that read the module at all read
  these: the *gate part*;
- its summary (projects.py ``_summarise``): whether the text parses and is not nested too
  deeply, the module-level code with the bodies of the functions that code cannot reach
  blanked out and the long methods that build nothing replaced by stand-ins
  (module_text.py; every line keeps its number: messages name the lines where an
  imported mesh was built), and the names functions declare ``global``: the *summary
  part*, only for a module some analysis in the process summarised.

A module's interface is ``gate`` or ``gate:summary``; the summary part starts with ``F``
for the summary that also keeps the bodies of the functions importers call (defs.py). The parts are computed where the
module was read anyway (the gate's regex scans, the summary's blanked text), so a cold
run pays a hash of text it already holds; only a warm run that finds an imported module
changed computes its parts from the new text, the summary part by an ``ast`` parse.
The modules a module imports in turn are dependencies of the importer's result of their
own, each checked by its own interface.

Standard library only: a warm run decides here without importing the engine.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .hashes import hash_parts

UNKNOWN = "?"  # a summary that failed for a reason the text does not show: any edit counts


def gate_part(text: str, fact: Callable[[Callable[[str], Any]], Any] | None = None) -> str:
    """The hash of what the gate's text tests read of a module; ``fact(compute)`` gives
    ``compute(text)``, from the gate's memo where the process has one."""
    from .defs import callable_names, device_functions
    from .module_scan import any_value, bindings, import_lines
    from ..stages.runtime_facts import facts_key

    if fact is None:
        def fact(compute: Callable[[str], Any]) -> Any:
            return compute(text)
    froms, imports = fact(import_lines)
    return hash_parts(repr(froms), repr(imports), repr(sorted(fact(bindings).items())),
                      "1" if any_value(text) else "0", " ".join(sorted(fact(device_functions))),
                      " ".join(sorted(fact(callable_names))),
                      fact(facts_key))


def summary_part_of(text: str, full: bool = False) -> str:
    """``hashes.summary_part`` of a module's text as ``_summarise`` computes it; ``full``: the
    summary that keeps the bodies of the functions importers call (``F`` before it)."""
    from .module_text import module_level

    return module_level(text, full).shape


def interface_of(text: str, summary: str | None) -> str:
    """The interface of ``text`` with the parts of a stored one: ``summary`` is the stored
    summary part (None: the gate part alone)."""
    gate = gate_part(text)
    if summary is None:
        return gate
    return f"{gate}:{summary_part_of(text, full=summary.startswith('F'))}"


def still_holds(deps: Mapping[str, str], interfaces: Mapping[str, str],
                current: Callable[[str], str | None], read: Callable[[str], str | None]) -> bool:
    """Whether a result computed from the files of ``deps`` (path -> digest) holds for
    their contents now: each is unchanged, or changed with the interface stored for it.
    ``current`` gives a file's digest now, ``read`` its text."""
    from .summaries import digest

    for path, d in deps.items():
        now = current(path)
        if now == d:
            continue
        stored = interfaces.get(path)
        if now is None or stored is None or stored.endswith(":" + UNKNOWN):
            return False
        text = read(path)
        if text is None or digest(text) != now:
            return False
        if interface_of(text, stored.partition(":")[2] or None) != stored:
            return False
    return True
