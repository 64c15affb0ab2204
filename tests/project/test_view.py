"""What a Project keeps of the files it reads: digests of all, texts of the last few."""

from __future__ import annotations

import os

from reshard_lint.project import view
from reshard_lint.project.roots import layout_for
from reshard_lint.project.summaries import digest


def _project(root) -> view.Project:  # type: ignore[no-untyped-def]
    return view.Project(layout_for(str(root / "m0.py"), root=str(root)), lambda *a: None)


def test_texts_are_kept_for_the_last_files_read_and_digests_for_all(tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for i in range(view._RECENT + 5):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"X = {i}\n")
        paths.append(str(p))
    project = _project(tmp_path)
    for i, p in enumerate(paths):
        assert project.text(p) == (f"X = {i}\n", digest(f"X = {i}\n"))
    assert len(project._recent) == view._RECENT
    # A file read before, whose text was let go: read again, the same answer.
    assert project.text(paths[0]) == ("X = 0\n", digest("X = 0\n"))
    assert project.current({p: digest(f"X = {i}\n") for i, p in enumerate(paths)})


def test_an_edit_is_seen_whether_or_not_the_text_was_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for i in range(view._RECENT + 1):
        p = tmp_path / f"m{i}.py"
        p.write_text("X = 1\n")
        paths.append(str(p))
    project = _project(tmp_path)
    for p in paths:
        project.text(p)
    old = {p: digest("X = 1\n") for p in paths}
    assert project.current(old)
    for p in (paths[0], paths[-1]):  # let go of, and kept
        with open(p, "w") as fh:
            fh.write("X = 22\n")
        st = os.stat(p)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert not project.current({paths[0]: old[paths[0]]})
    assert not project.current({paths[-1]: old[paths[-1]]})
    assert project.text(paths[0]) == ("X = 22\n", digest("X = 22\n"))
    assert project.digest_of(paths[-1]) == digest("X = 22\n")
