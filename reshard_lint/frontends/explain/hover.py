"""The language server's hover on a diagnostic: the same picture as ``reshard-lint explain``.

Hovering inside a diagnostic's range shows its meshes as grids of device ids (the plain
text form, in a Markdown code block, which every editor shows in a monospace font): a
move's two meshes, a construction beside the natural order, a placement with the
devices each process owns. Elsewhere, and where the analysis does not know the devices,
there is no hover: the editor already shows the diagnostic's message.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from lsprotocol import types
from pygls.uris import to_fs_path

from ...engine.engine import Cancelled
from .gather import explain_source
from .text import render

# Wide enough for two 8-device grids side by side; editors wrap nothing in a code block.
HOVER_COLUMNS = 100


def _inside(r: types.Range, p: types.Position) -> bool:
    return (r.start.line, r.start.character) <= (p.line, p.character) <= (r.end.line, r.end.character)


async def hover(ls: Any, params: types.HoverParams) -> Optional[types.Hover]:
    """``ls`` is lsp.ReshardServer: its cached analysis says which diagnostics are under
    the cursor; the pictures are made on its analysis thread, where rules run one at a time."""
    from ..lsp_analysis import project_settings
    from ..lsp_positions import Positions, to_lsp

    uri = params.text_document.uri
    if uri not in ls.workspace.text_documents:
        return None
    try:
        result, _ = await ls.analysis_for(uri)
    except (Cancelled, asyncio.CancelledError):
        return None
    if result.broken:
        return None
    pos = Positions(result.lines, ls.encoding)
    hits = [(d, to_lsp(d, uri, pos)) for d in result.diagnostics]
    hits = [(d, ld) for d, ld in hits if _inside(ld.range, params.position)]
    if not hits:
        return None
    path = to_fs_path(uri) or uri
    settings, _ = project_settings(path, result.settings)
    engine_settings = settings.engine_settings()
    wanted = {(d.code, d.line, d.col) for d, _ in hits}
    loop = asyncio.get_running_loop()
    outcome = await loop.run_in_executor(ls.pool, explain_source, result.source, path, hits[0][0].line,
                                         engine_settings)
    shown = [e for e in outcome.explanations if (e.code, e.line, e.col) in wanted]
    if not shown:
        return None
    picture = render(shown, HOVER_COLUMNS, colour=False).rstrip("\n")
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                     value=f"**reshard-lint explain**\n\n```text\n{picture}\n```"),
        range=hits[0][1].range)
