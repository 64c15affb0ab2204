"""Rule documentation, generated from the rules themselves (one source, three uses).

``reshard-lint rule CODE`` prints it; ``python -m reshard_lint.rules.docs`` writes
docs/rules/CODE.md; a test fails when a page is stale or misses a section.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import DOCS_URL  # noqa: F401 - re-exported for the docs tooling
from . import Rule, all_rules

SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Options",
            "Runtimes", "Platforms", "What JAX does", "References")


def _strip_markers(code: str) -> str:
    import re

    return re.sub(r"  # (RSH\d{3}:\d+\s*)+$", "", code, flags=re.MULTILINE)


def use_instead(rule: type[Rule]) -> str:
    """The page's "Use instead" program: the clean example marked ``instead``; else the
    first firing example's fix; else the first clean example (markers removed)."""
    clean = rule.clean()
    marked = [e.code for e in clean if e.instead]
    firing = rule.firing()
    fixed = firing[0].fixed if firing else None
    return _strip_markers(marked[0] if marked else fixed or (clean[0].code if clean else ""))


def rule_doc(rule: type[Rule]) -> str:
    firing = rule.firing()
    example = firing[0] if firing else None
    fix = {"safe": "safe fix", "unsafe": "unsafe fix (--unsafe-fixes)",
           "none": "no automatic fix"}[rule.fix_safety]
    out = [
        f"# {rule.code} {rule.name}",
        "",
        f"{rule.summary}. Severity: {rule.severity}; {fix}.",
        "",
        "## What it does",
        "",
        rule.what,
        "",
        "## Why is this bad?",
        "",
        rule.why,
        "",
        "## Example",
        "",
        "```python",
        _strip_markers(example.code).rstrip() if example else "",
        "```",
        "",
        "## Use instead",
        "",
        "```python",
        use_instead(rule).rstrip(),
        "```",
        "",
        "## Fix safety",
        "",
        rule.fix_text,
        "",
        "## Options",
        "",
    ]
    if rule.options:
        for opt in rule.options:
            choices = f" (one of {', '.join(repr(c) for c in opt.choices)})" if opt.choices else ""
            out.append(f"- `{opt.name}` (default {opt.default!r}){choices}: {opt.help}")
    else:
        out.append("None.")
    out += ["", "## Runtimes", ""]
    if rule.runtimes == ("multi-controller",):
        out.append("Multi-controller only (one Python process per host: `jax.distributed`, TPU pods, "
                   "multi-node GPU). A single-controller runtime (Pathways) moves arrays between any "
                   "device sets, and one process with several CPU devices holds every shard, so "
                   "the rule is silent in files analysed as single-controller (`runtime = "
                   "\"single-controller\"`, a `per-file-runtime` glob; with `\"auto\"`, the default, "
                   "a file that sets `jax_num_cpu_devices` or `--xla_force_host_platform_device_count`, "
                   "or whose conftest.py or imported modules do, and does not call "
                   "`jax.distributed.initialize`, or that selects Pathways' proxy backend) and in code that "
                   "runs only through colocated Python. See [runtimes](../runtimes.md).")
    else:
        out.append("Every runtime: multi-controller and single-controller (Pathways) alike. "
                   "See [runtimes](../runtimes.md).")
    out += ["", "## Platforms", "", rule.platforms_text or (
        "The same on every platform: what the rule checks does not depend on how TPU, GPU or "
        "CPU order devices. See [platforms](../platforms.md)."), ""]
    out += ["## What JAX does", ""]
    g = rule.grounding
    if g is None or g.not_grounded:
        out.append(f"Not grounded in a run: {g.not_grounded if g else 'no claim recorded'}.")
    else:
        def show(o: object) -> str:
            if o is None:
                return "not claimed"
            status, match, where = o.status, o.match, o.where  # type: ignore[attr-defined]
            s = {"ok": "runs without error", "error": "raises", "crash": "crashes",
                 "timeout": "hangs"}[status]
            if match:
                s += f" (matching `{match}`)"
            if status != "ok":
                s += " on every process" if where == "all" else " on at least one process"
            return s
        out.append(f"- {g.processes} processes x 4 CPU devices (multi-controller): "
                   f"the example {show(g.multi)}.")
        out.append(f"- 1 process x 8 CPU devices: the example {show(g.single)}.")
        out.append("- Checked by `pytest -m multicontroller` "
                   "(tests/multicontroller/test_grounding.py) on every "
                   "firing and clean example of this rule.")
    out += ["", "## References", ""]
    out += [f"- {r}" for r in rule.references] or ["None."]
    return "\n".join(out) + "\n"


def write_all(root: Path) -> list[Path]:
    written = []
    for rule in all_rules():
        path = root / "docs" / "rules" / f"{rule.code}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rule_doc(rule), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for p in write_all(root):
        print(p)
