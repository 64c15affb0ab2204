"""What a rule is: its metadata, its own examples, and the runtime claim behind it.

A rule module holds one ``Rule`` subclass. The same examples drive three things:
the unit tests (exact diagnostics), the docs, and the grounding tests that run the
examples under real multi-controller JAX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Literal

if TYPE_CHECKING:
    from ..core.diagnostic import Diagnostic
    from ..analysis.context import FileContext
    from ..analysis.events import Event

# A trailing marker in example and fixture code: `# RSH201:5` (1-based column, as
# flake8 prints it); several markers may share a line: `# RSH202:5 RSH203:9`.
_MARKER = re.compile(r"\b(RSH\d{3}):(\d+)\b")


def expected_markers(code: str) -> list[tuple[int, int, str]]:
    """(line, 1-based column, code) for every marker in a code sample, in order."""
    out: list[tuple[int, int, str]] = []
    for lineno, text in enumerate(code.splitlines(), start=1):
        hash_at = text.find("#")
        if hash_at < 0:
            continue
        for match in _MARKER.finditer(text[hash_at:]):
            out.append((lineno, int(match.group(2)), match.group(1)))
    return sorted(out)


@dataclass(frozen=True)
class Example:
    """A complete program. ``fires`` examples carry `# RSHnnn:col` markers."""

    code: str
    fires: bool
    fixed: str | None = None  # the program after the rule's fix, where it has one
    runnable: bool = True  # False only for a program that cannot run as it stands
    note: str = ""
    # The platform whose device order makes it fire ("tpu"): grounded on mock devices
    # (tests/platforms); on this CPU machine the orders agree and it must run without error.
    platform: str = ""
    # Its failure needs the processes to list a set of devices in different orders, which
    # follows the devices' hashes: it prints "order: [ids]" before the failing step, and a
    # run where every process printed the same order exercised nothing (tests/multicontroller).
    hash_order: bool = False
    # The clean program the rule's page shows under "Use instead" (docs.py): at most one
    # per rule; without one, the page shows the first firing example's fix, or the
    # first clean example.
    instead: bool = False

    def expected(self) -> list[tuple[int, int, str]]:
        return expected_markers(self.code)


def Invalid(code: str, fixed: str | None = None, *, runnable: bool = True, note: str = "",
            platform: str = "", hash_order: bool = False) -> Example:
    return Example(code=_dedent(code), fires=True, fixed=_dedent(fixed) if fixed else None,
                   runnable=runnable, note=note, platform=platform, hash_order=hash_order)


def Valid(code: str, *, runnable: bool = True, note: str = "", instead: bool = False) -> Example:
    return Example(code=_dedent(code), fires=False, runnable=runnable, note=note, instead=instead)


def _dedent(code: str) -> str:
    import textwrap

    return textwrap.dedent(code).lstrip("\n")


OutcomeStatus = Literal["ok", "error", "crash", "timeout"]


@dataclass(frozen=True)
class Outcome:
    """What a run is claimed to do.

    ``status`` is what at least one process shows (``where="any"``) or every process
    shows (``where="all"``); ``match`` is a regular expression searched in
    ``"ExceptionType: message"`` for errors.
    """

    status: OutcomeStatus
    match: str = ""
    where: Literal["any", "all"] = "any"


@dataclass(frozen=True)
class Grounding:
    """The rule's claim about real JAX, checked by tests/multicontroller.

    ``multi`` is the outcome of every runnable firing example with ``processes``
    processes of 4 CPU devices each; ``single`` the outcome in one process with
    8 CPU devices (None: the rule says nothing about one host). Clean examples must
    run without the claimed failure in both modes.
    """

    multi: Outcome | None
    single: Outcome | None = None
    processes: int = 2
    timeout: float = 60.0
    not_grounded: str = ""  # non-empty: the claim cannot be run here, and why


@dataclass(frozen=True)
class RuleOption:
    name: str
    default: object
    help: str
    choices: tuple[object, ...] = ()


class Rule:
    """One rule. Subclasses set the class attributes and implement ``check``."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, stable
    summary: ClassVar[str]  # one line: what it flags
    # Higher wins when several rules match one call (RSH3xx > RSH204 > RSH203 ...).
    priority: ClassVar[int] = 0
    fix_safety: ClassVar[Literal["safe", "unsafe", "none"]] = "none"
    severity: ClassVar[Literal["error", "warning"]] = "error"
    examples: ClassVar[tuple[Example, ...]] = ()
    # How the rule depends on the platforms' device orders (docs/platforms.md); empty: it does not.
    platforms_text: ClassVar[str] = ""
    grounding: ClassVar[Grounding | None] = None
    options: ClassVar[tuple[RuleOption, ...]] = ()
    what: ClassVar[str] = ""  # docs: What it does
    why: ClassVar[str] = ""  # docs: Why is this bad?
    fix_text: ClassVar[str] = ""  # docs: Fix safety
    references: ClassVar[tuple[str, ...]] = ()
    # Events (see reshard_lint.events) this rule looks at; the engine dispatches only these.
    events: ClassVar[tuple[type, ...]] = ()
    # Where the failure it names happens (docs/runtimes.md): a single-controller runtime
    # (Pathways) moves arrays between any device sets, so multi-controller rules are
    # silent in files analysed as single-controller.
    runtimes: ClassVar[tuple[str, ...]] = ("multi-controller", "single-controller")

    def __init__(self, settings: dict[str, object] | None = None) -> None:
        self.settings = dict(settings or {})

    def check(self, event: "Event") -> Iterable["Diagnostic"]:  # pragma: no cover - abstract
        raise NotImplementedError

    def start(self, ctx: "FileContext") -> None:
        """Called before a file is analysed."""

    def finish(self, ctx: "FileContext") -> Iterable[tuple[object, "Diagnostic"]]:
        """Called after the traversal: (anchor node, diagnostic) pairs decided late."""
        return ()

    @classmethod
    def firing(cls) -> list[Example]:
        return [e for e in cls.examples if e.fires]

    @classmethod
    def clean(cls) -> list[Example]:
        return [e for e in cls.examples if not e.fires]

    @classmethod
    def doc_path(cls) -> str:
        return f"docs/rules/{cls.code}.md"
