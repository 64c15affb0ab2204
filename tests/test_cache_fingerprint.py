"""The result cache is keyed by the contents of every module that decides what the engine
reports: an editable install whose analysis, project layer or rules change (or a new build
under the same version) serves no result the old code computed."""

from __future__ import annotations

import os

from reshard_lint.core.cache import fingerprinted_files


def test_the_cache_key_reads_the_analysis_the_project_layer_the_rules_and_the_stages() -> None:
    import reshard_lint

    package = os.path.dirname(os.path.abspath(reshard_lint.__file__))
    files = {os.path.relpath(p, package).replace(os.sep, "/") for p in fingerprinted_files()}
    for module in ("analysis/flow.py", "analysis/models/transfers.py", "project/registries.py",
                   "rules/rsh201_cross_device_set_put.py", "stages/gate.py", "engine/engine.py", "core/cache.py"):
        assert module in files, module
    # strict mode and the front ends' own modules do not change what the engine reports
    assert not any(f.startswith("runtime/") for f in files)
