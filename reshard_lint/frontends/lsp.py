"""A language server for editors: ``reshard-lint lsp`` (or ``python -m reshard_lint lsp``).

It speaks the Language Server Protocol over stdio through pygls and offers:

* diagnostics on open, save and change (debounced), with the rule's severity, a link to
  its page when one exists (the clone's docs/rules/CODE.md), and related locations (where
  the two meshes behind a crossing are built); ``# noqa`` comments are honoured as flake8
  honours them;
* code actions: the rule's fix as a quick fix, "Add `# noqa: RSHnnn`", and a
  ``source.fixAll.reshard-lint`` action that applies every safe fix;
* hover on a crossing diagnostic: its two meshes drawn as grids of device ids
  (explain/hover.py, the picture of ``reshard-lint explain``).

A buffer that does not parse (the user is in the middle of typing) publishes nothing:
the last good diagnostics stay in the editor and no RSH001 is shown, because the
editor's Python language server already reports the syntax error, and because the
diagnostics flickering away on every keystroke would be worse than slightly stale ones.
Their quick fixes are withheld until the buffer parses again (the edits could be stale).

Settings (``initializationOptions`` or ``workspace/didChangeConfiguration`` with a
``reshard-lint`` section; both flat keys and the section are accepted)::

    {"runtime": "auto" | "multi-controller" | "single-controller", "select": ["RSH"], "ignore": [],
     "debounce": 0.05, "platforms": ["tpu", "gpu", "cpu"],
     "per-file-runtime": {"tests/*": "single-controller"}}

Keys the editor leaves out come from the project's ``[tool.reshard-lint]``.

Each version of a document is analysed at most once: diagnostics and code actions share
one analysis, and an analysis of a version that a newer one replaced is dropped from the
queue, or stopped at the engine's next stage if it already runs.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import os
import sys
import tokenize
from concurrent.futures import ThreadPoolExecutor
from typing import Mapping, Sequence

try:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
except ImportError as exc:  # the `lsp` extra is not installed: main() says what to install
    _MISSING: ImportError | None = exc
    LanguageServer = object  # type: ignore[misc,assignment]
else:
    _MISSING = None
    from .lsp_positions import SOURCE, Positions, enum_value, line_body, to_lsp

from .. import __version__
from ..core import noqa
from ..core.diagnostic import Diagnostic, Edit
from ..engine.engine import INTERNAL_ERROR, Cancelled
from ..core.fixes import apply, edits_of
from .lsp_analysis import Analysis, Settings, analyse, log

FIX_ALL_KIND = "source.fixAll.reshard-lint"


# --- noqa edits ----------------------------------------------------------------------------


def _line_ends_in_string(source: str, line: int) -> bool:
    """True when a string (or f-string) spans the end of ``line``: no comment can go there."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.start[0] > line:
                return False
            if tok.start[0] <= line < tok.end[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
                return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    return False


def noqa_edit(source: str, lines: Sequence[str], line: int, code: str) -> Edit | None:
    """The edit that silences ``code`` on ``line``: extend its noqa comment or add one."""
    if not 1 <= line <= len(lines):
        return None
    text = line_body(lines[line - 1])
    # A comment after a line continuation is a syntax error.
    if text.rstrip().endswith("\\") or _line_ends_in_string(source, line):
        return None
    m = noqa.NOQA.search(text) if "#" in text else None
    if m is not None:
        if m.group("codes") is None:
            return None  # a bare noqa already silences everything
        at = m.end("codes")
        return Edit(line, at, line, at, f",{code}")
    body = text.rstrip()
    return Edit(line, len(body), line, len(text), f"  # noqa: {code}")


# --- the server ----------------------------------------------------------------------------


class ReshardServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: pygls applies incremental edits on str.splitlines() lines, which also
        # break at form feeds and other separators that LSP and Python do not treat as line
        # ends, so a file with a form feed would drift out of step with the editor.
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.settings = Settings()
        # Rules keep per-file state while they run, so analyses go one at a time, off the
        # event loop so that the server keeps answering while a large file is analysed.
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reshard-lint")
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.last: dict[str, Analysis] = {}  # uri -> last analysis that parsed
        # uri -> the analysis under way: (source, settings, future); one per version.
        self.running: dict[str, tuple[str, Settings, asyncio.Future[Analysis]]] = {}

    @property
    def encoding(self) -> str:
        return enum_value(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    async def analysis_for(self, uri: str) -> tuple[Analysis, int | None]:
        doc = self.workspace.get_text_document(uri)
        source, version = doc.source, doc.version
        cached = self.last.get(uri)
        if cached is not None and cached.source == source and cached.settings == self.settings \
                and self.deps_current(cached.deps):
            return cached, version
        settings = self.settings
        running = self.running.get(uri)
        if running is not None and running[0] == source and running[1] == settings:
            return await asyncio.shield(running[2]), version
        if running is not None:
            running[2].cancel()  # a queued analysis of an older version never starts
        path = to_fs_path(uri) or uri

        def stale() -> bool:
            doc = self.workspace.text_documents.get(uri)
            return doc is None or doc.source is not source or self.settings != settings

        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool, analyse, source, path, settings, stale, self.unsaved)
        self.running[uri] = (source, settings, future)
        try:
            return await asyncio.shield(future), version
        finally:
            if self.running.get(uri, (None, None, None))[2] is future:
                del self.running[uri]

    async def lint(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if uri not in self.workspace.text_documents:
            return  # closed while waiting
        try:
            result, version = await self.analysis_for(uri)
        except (Cancelled, asyncio.CancelledError):
            return  # a newer version is on its way
        except Exception:  # noqa: BLE001 - an editor session must survive a linter bug
            log.exception("reshard-lint failed on %s", uri)
            return
        if result.broken:
            return
        # The document may have changed while the analysis ran; a newer lint is scheduled then.
        doc = self.workspace.text_documents.get(uri)
        if doc is None or doc.source != result.source:
            return
        self.last[uri] = result
        pos = Positions(result.lines, self.encoding)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[to_lsp(d, uri, pos) for d in result.diagnostics]))

    def unsaved(self, path: str) -> str | None:
        """The text of ``path`` when an open document holds it (read from the analysis
        thread: a document's text is replaced whole, never changed in place)."""
        real = os.path.realpath(path)
        for uri, doc in list(self.workspace.text_documents.items()):
            fs = to_fs_path(uri)
            if fs is not None and os.path.realpath(fs) == real:
                return doc.source
        return None

    def deps_current(self, deps: Mapping[str, str]) -> bool:
        from ..project.view import unchanged

        return unchanged(deps, unsaved=self.unsaved)

    def changed(self, uri: str, delay: float) -> None:
        """``uri`` changed: lint it, and every open document whose last analysis read it."""
        if uri in self.workspace.text_documents:
            self.schedule(uri, delay)
        fs = to_fs_path(uri)
        if fs is None:
            return
        real = os.path.realpath(fs)
        for other, result in list(self.last.items()):
            if other != uri and any(os.path.realpath(p) == real for p in result.deps):
                self.schedule(other, delay)

    def schedule(self, uri: str, delay: float) -> None:
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(delay, lambda: asyncio.ensure_future(self.lint(uri)))

    def relint_all(self) -> None:
        self.last.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents:
            return []
        try:
            result, _ = await self.analysis_for(uri)
        except (Cancelled, asyncio.CancelledError):
            return []  # the document changed under the request: the editor asks again
        if result.broken:
            return []
        pos = Positions(result.lines, self.encoding)
        only = params.context.only
        kinds = [enum_value(k) for k in only or ()]
        # A kind asks for itself and everything below it ("source" includes "source.fixAll.x").
        want_quickfix = not kinds or any(_under(types.CodeActionKind.QuickFix.value, k) for k in kinds)
        want_fix_all = not kinds or any(_under(FIX_ALL_KIND, k) for k in kinds)
        actions: list[types.CodeAction] = []
        req = params.range
        if want_quickfix:
            for d in result.diagnostics:
                ld = to_lsp(d, uri, pos)
                if not _overlaps(ld.range, req):
                    continue
                # A fix that needs an import gets it as one more edit (libcst, only then).
                edits = edits_of(result.source, d.fix) if d.fix is not None else None
                if d.fix is not None and edits is not None:
                    title = d.fix.title if d.fix.safe else f"{d.fix.title} (unsafe)"
                    actions.append(types.CodeAction(
                        title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[ld],
                        is_preferred=d.fix.safe,
                        edit=types.WorkspaceEdit(changes={uri: [pos.edit(e) for e in edits]})))
                if d.code != INTERNAL_ERROR:
                    edit = noqa_edit(result.source, result.lines, d.line, d.code)
                    if edit is not None:
                        actions.append(types.CodeAction(
                            title=f"Add `# noqa: {d.code}`", kind=types.CodeActionKind.QuickFix,
                            diagnostics=[ld], edit=types.WorkspaceEdit(changes={uri: [pos.edit(edit)]})))
        if want_fix_all and any(d.fix is not None and d.fix.safe for d in result.diagnostics):
            fixed = _fix_all(result.source, result.diagnostics)
            if fixed != result.source:
                end = Positions(result.lines, self.encoding).position(len(result.lines) + 1, 0)
                actions.append(types.CodeAction(
                    title="reshard-lint: apply all safe fixes", kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(
                        range=types.Range(start=types.Position(line=0, character=0), end=end),
                        new_text=fixed)]})))
        return actions


def _fix_all(source: str, diagnostics: list[Diagnostic]) -> str:
    # Only the fixes of this analysis: overlapping ones wait for the next analysis, as the
    # CLI's --fix would do in its next round.
    out, _ = apply(source, diagnostics)
    return out


def _under(kind: str, requested: str) -> bool:
    return kind == requested or kind.startswith(requested + ".")


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def build_server() -> ReshardServer:
    server = ReshardServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: ReshardServer, params: types.InitializeParams) -> None:
        ls.settings = Settings.from_options(params.initialization_options)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: ReshardServer, params: types.DidChangeConfigurationParams) -> None:
        new = Settings.from_options(params.settings, ls.settings)
        if new != ls.settings:
            ls.settings = new
            ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: ReshardServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.last.pop(params.text_document.uri, None)
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: ReshardServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, ls.settings.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: ReshardServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ReshardServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = ls.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        ls.last.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        ls.changed(uri, 0)  # its importers now read it from disk

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False))
    async def code_action(ls: ReshardServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: ReshardServer, params: types.HoverParams) -> types.Hover | None:
        from .explain.hover import hover as explain_hover  # the meshes as pictures (explain/)

        return await explain_hover(ls, params)

    return server


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="reshard-lint lsp", description="Run the reshard-lint language server over stdio.")
    # Many LSP clients pass --stdio by habit; stdio is the only transport, so it is accepted.
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--log-file", default=None, help="write the server's log to this file")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="log level (default WARNING)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if _MISSING is not None:
        # reshard-lint is on no package index (the name there could be anyone's): the
        # extra is installed from the clone, or its one dependency directly.
        print(f"reshard-lint lsp needs pygls>=1.3 ({_MISSING}); install it into this environment "
              "with: pip install 'pygls>=1.3' (or pip install '/path/to/reshard-lint[lsp]' "
              "from the clone)", file=sys.stderr)
        return 2
    # stdout carries the protocol, so logs go to a file or stderr, never stdout.
    handler: logging.Handler = logging.FileHandler(args.log_file) if args.log_file \
        else logging.StreamHandler(sys.stderr)
    logging.basicConfig(level=args.log_level, handlers=[handler],
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = build_server()
    try:
        server.start_io()
    finally:
        server.pool.shutdown(wait=False, cancel_futures=True)
    # pygls swallows the SystemExit of the exit notification; LSP wants 0 only after a
    # shutdown request (an exit without it, or a vanished client, is an abnormal end).
    return 0 if getattr(server.protocol, "_shutdown", False) else 1


if __name__ == "__main__":
    sys.exit(main())
