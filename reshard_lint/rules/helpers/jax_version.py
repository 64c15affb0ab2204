"""The JAX versions a file's project runs on (project/pins.py), for rules whose claim
depends on them; the files read become the result's dependencies, as where the code runs
does (engine.analyse): a cached result holds while they are unchanged."""

from __future__ import annotations

from typing import Optional

from ...analysis.context import FileContext
from ...project.pins import JaxVersions, jax_versions, pin_files


def project_jax(ctx: FileContext) -> Optional[JaxVersions]:
    """What the project installs or pins of JAX (None: it says nothing)."""
    if ctx.project is not None:
        for path in pin_files(ctx.path):
            found = ctx.project.project.digest_of(path)
            if found is not None:
                ctx.project.deps[path] = found
    return jax_versions(ctx.path)
