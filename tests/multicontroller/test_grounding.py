"""Every rule's runtime claim, checked against real multi-controller JAX.

Each rule carries its own examples and a ``Grounding``: what a firing example does with
``processes`` processes of 4 CPU devices (``multi``) and in one process with 8 devices
(``single``). Here every runnable firing example must show the claimed outcome, and
every runnable clean example must run cleanly on every process in both modes (in one
process, a rule with ``single=None`` only requires the absence of its failure).

All examples of all rules share a few process launches: one batch per (mode, process
count); examples claimed to crash or hang get processes of their own, run concurrently
because they mostly wait.
"""

from __future__ import annotations

import re
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from reshard_lint.rules import Example, Outcome, Rule, all_rules, rule_by_code

from .harness import DEFAULT_TIMEOUT, Mode, SnippetResult, matches, run_batch

# One xdist worker runs the whole module: its module-scoped JAX runs are made once.
pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_grounding")]

DEVICES_PER_PROCESS = 4
SINGLE_DEVICES = 8  # the Grounding contract: single mode is one process with 8 devices
# Alone runs are mostly waiting on a hang or a crash; a few at once keep the 2 cores busy
# without starving the batches.
PARALLEL_ALONE = 3

RULES: tuple[type[Rule], ...] = all_rules()
# Without any rule, one failing case says so instead of an empty (skipped) parameter set.
CODES: list[str] = [r.code for r in RULES] or ["no-rules-shipped"]


def _grounded(rule: type[Rule]) -> bool:
    return rule.grounding is not None and not rule.grounding.not_grounded


@dataclass(frozen=True)
class Job:
    rule: str
    index: int  # position in rule.examples
    example: Example
    mode: Mode
    processes: int  # multi mode; single mode always has one process
    timeout: float
    alone: bool

    @property
    def key(self) -> tuple[str, int, Mode]:
        return (self.rule, self.index, self.mode)


def _claim(rule: type[Rule], mode: Mode) -> Outcome | None:
    assert rule.grounding is not None
    return rule.grounding.multi if mode == "multi" else rule.grounding.single


def plan_jobs(rules: tuple[type[Rule], ...]) -> list[Job]:
    jobs: list[Job] = []
    for rule in rules:
        if not _grounded(rule):
            continue
        g = rule.grounding
        assert g is not None
        for index, example in enumerate(rule.examples):
            if not example.runnable:
                continue
            for mode in ("multi", "single"):
                claim = _claim(rule, mode)  # type: ignore[arg-type]
                # A crash or a hang would tear a batch down and cost a rerun; a rule that
                # asks for more than the default time waits out one of JAX's own deadlines,
                # which in a batch would hold every later snippet back.
                alone = example.fires and claim is not None and (
                    claim.status in ("crash", "timeout") or g.timeout > DEFAULT_TIMEOUT)
                jobs.append(Job(rule.code, index, example, mode, g.processes,  # type: ignore[arg-type]
                                g.timeout, alone))
    return jobs


def run_jobs(jobs: list[Job]) -> dict[tuple[str, int, Mode], SnippetResult]:
    groups: dict[tuple[Mode, int], list[Job]] = {}
    alone: list[Job] = []
    for job in jobs:
        if job.alone:
            alone.append(job)
        else:
            groups.setdefault((job.mode, job.processes if job.mode == "multi" else 1), []).append(job)

    def topology(job: Job) -> tuple[int, int]:
        if job.mode == "single":
            return 1, SINGLE_DEVICES
        return job.processes, DEVICES_PER_PROCESS

    def batch(group: list[Job]) -> list[SnippetResult]:
        n, d = topology(group[0])
        return run_batch([j.example.code for j in group], mode=group[0].mode, processes=n,
                         devices=d, timeout=[j.timeout for j in group])

    def one(job: Job) -> list[SnippetResult]:
        n, d = topology(job)
        return run_batch([job.example.code], mode=job.mode, processes=n, devices=d,
                         timeout=job.timeout, alone=[True])

    results: dict[tuple[str, int, Mode], SnippetResult] = {}
    # Batches get their own threads so the long alone waits never hold them back.
    with ThreadPoolExecutor(max_workers=len(groups) or 1) as batch_pool, \
            ThreadPoolExecutor(max_workers=PARALLEL_ALONE) as alone_pool:
        pending: list[tuple[list[Job], Future[list[SnippetResult]]]] = []
        for group in groups.values():
            pending.append((group, batch_pool.submit(batch, group)))
        for job in alone:
            pending.append(([job], alone_pool.submit(one, job)))
        for group, future in pending:
            for job, res in zip(group, future.result()):
                results[job.key] = res
    return results


@pytest.fixture(scope="session")
def grounding_results() -> dict[tuple[str, int, Mode], SnippetResult]:
    return run_jobs(plan_jobs(RULES))


def _first_line(example: Example) -> str:
    marked = [ln.strip() for ln in example.code.splitlines() if re.search(r"#\s*RSH\d{3}:", ln)]
    return (marked or [example.code.strip().splitlines()[-1].strip()])[0][:100]


def _describe(claim: Outcome) -> str:
    return f"{claim.status} [{claim.where}]" + (f" /{claim.match}/" if claim.match else "")


def _one_order(res: SnippetResult) -> bool:
    """Every process listed the set of devices in the same order: the hashes happened to
    agree, so the run could not show the failure (it shows it whenever they differ)."""
    orders = {next((ln for ln in p.stdout.splitlines() if ln.startswith("order:")), None) for p in res.processes}
    return len(orders) == 1 and None not in orders


def check_rule(rule: type[Rule],
               results: dict[tuple[str, int, Mode], SnippetResult]) -> list[str]:
    """Every mismatch between the rule's claims and what the processes did."""
    problems: list[str] = []
    for index, example in enumerate(rule.examples):
        if not example.runnable:
            continue
        for mode in ("multi", "single"):
            res = results[(rule.code, index, mode)]  # type: ignore[index]
            claim = _claim(rule, mode)  # type: ignore[arg-type]
            label = f"{rule.code} example {index} ({'fires' if example.fires else 'clean'}), {mode}"
            if example.fires and example.platform:
                # Fires for another platform's device order (tests/platforms checks it on
                # mock devices); on CPU the two orders agree, so it runs without error.
                if not res.all_ok():
                    problems.append(f"{label}: a {example.platform}-only example must run ok on CPU, "
                                    f"got {res.details()}\nexample:\n{example.code}")
            elif example.fires:
                if claim is None:
                    continue
                if not matches(res, claim.status, claim.match, claim.where) and not (
                        example.hash_order and res.all_ok() and _one_order(res)):
                    problems.append(f"{label}: claimed {_describe(claim)}, got {res.details()}\n"
                                    f"example:\n{example.code}")
            elif not res.all_ok():
                failure = claim if claim is not None else rule.grounding.multi  # type: ignore[union-attr]
                failed_as_claimed = failure is not None and failure.status != "ok" and \
                    matches(res, failure.status, failure.match, "any")
                # A rule that says nothing about one host (single=None) is about
                # multi-controller programs; their clean examples may legitimately not
                # fit one process (per-host data sized for 4 local devices), so there
                # they need only be free of the rule's failure. Everywhere else: ok.
                strict = mode == "multi" or rule.grounding.single is not None  # type: ignore[union-attr]
                if strict or failed_as_claimed:
                    problems.append(f"{label}: clean example must run ok everywhere"
                                    f"{' (it shows the claimed failure)' if failed_as_claimed else ''},"
                                    f" got {res.details()}\nexample:\n{example.code}")
    return problems


@pytest.mark.parametrize("code", CODES)
def test_grounding(code: str, grounding_results: dict[tuple[str, int, Mode], SnippetResult]) -> None:
    rule = rule_by_code(code)
    assert rule is not None, "reshard_lint.rules.all_rules() found no rule to ground"
    assert rule.grounding is not None, f"{code} ships without a grounding claim"
    if rule.grounding.not_grounded:
        # Listed by test_not_grounded_rules_are_listed; there is no claim to run.
        assert rule.grounding.not_grounded.strip()
        return
    problems = check_rule(rule, grounding_results)
    assert not problems, "\n\n".join(problems)


def test_every_shipped_rule_is_grounded() -> None:
    assert RULES, "reshard_lint.rules.all_rules() found no rule"
    problems: list[str] = []
    for rule in RULES:
        code = rule.code
        if not re.fullmatch(r"RSH\d{3}", code):
            problems.append(f"{code!r} is not an RSHnnn code")
        g = rule.grounding
        if g is None:
            problems.append(f"{code}: no grounding")
            continue
        if g.not_grounded:
            continue  # named by test_not_grounded_rules_are_listed
        if g.multi is None and g.single is None:
            problems.append(f"{code}: grounding claims nothing (multi and single are None)")
        if not any(e.fires and e.runnable for e in rule.examples):
            problems.append(f"{code}: no runnable firing example to ground the claim")
        if not any(not e.fires and e.runnable for e in rule.examples):
            problems.append(f"{code}: no runnable clean example")
    assert not problems, "\n".join(problems)


def test_not_grounded_rules_are_listed() -> None:
    listed = {r.code: r.grounding.not_grounded for r in RULES
              if r.grounding is not None and r.grounding.not_grounded}
    for code, reason in sorted(listed.items()):
        print(f"NOT GROUNDED {code}: {reason}")
        warnings.warn(f"{code} is not grounded in a real run: {reason}", stacklevel=1)
    assert all(reason.strip() for reason in listed.values())
    grounded = {r.code for r in RULES if _grounded(r)}
    assert grounded.isdisjoint(listed) and grounded | set(listed) <= {r.code for r in RULES}


def test_outcome_table(grounding_results: dict[tuple[str, int, Mode], SnippetResult]) -> None:
    """Print what every example did (run with -s to see it)."""
    lines = [f"{'rule':7} {'ex':>2} {'kind':5} {'mode':6} outcome"]
    for (code, index, mode), res in sorted(grounding_results.items()):
        rule = rule_by_code(code)
        assert rule is not None
        kind = "fires" if rule.examples[index].fires else "clean"
        lines.append(f"{code:7} {index:>2} {kind:5} {mode:6} {res.brief()}"
                     f"{' (alone)' if res.ran_alone else ''}")
    print("\n" + "\n".join(lines))
    assert len(grounding_results) == len(plan_jobs(RULES))
