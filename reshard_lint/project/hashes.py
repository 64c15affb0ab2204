"""The hashes a module's interface (interface.py) is made of: its parts are hashed alike,
and the summary part (what a summary runs of the module, module_text.py) is one of them."""

from __future__ import annotations

import hashlib


def hash_parts(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=12)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0\1")
    return h.hexdigest()


def summary_part(body_only: str, rebound: set[str]) -> str:
    """The hash of what a summary runs: its module-level text (trailing blank lines do not
    move any line) and the names it does not export because a function rebinds them."""
    return hash_parts(body_only.rstrip(), " ".join(sorted(rebound)))
