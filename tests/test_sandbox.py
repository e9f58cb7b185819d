"""The workspace sandbox refuses every way out: ``..``, absolute paths, ``~``, NUL bytes and
symlinks (to files and to directories), both when a path is resolved and when rg walks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nodes.code.files import read_lines
from nodes.code.search import glob_files, search
from nodes.code.sandbox import (
    PathNotFound,
    PathRefused,
    SandboxError,
    read_bytes_inside,
    regular_file_inside,
    resolve_inside,
    workspace_root,
)

SECRET = "TOPSECRET_e3b0c442"


@pytest.fixture()
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace next to an outside folder holding a secret, with symlinks leading out."""
    ws = tmp_path / "ws"
    out = tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    out.mkdir()
    (out / "secret.txt").write_text(f"{SECRET}\n")
    (out / "deep").mkdir()
    (out / "deep" / "more.py").write_text(f"x = '{SECRET}'\n")
    (ws / "src" / "app.py").write_text("def ok():\n    return 1\n")
    (ws / "link_file.txt").symlink_to(out / "secret.txt")
    (ws / "link_dir").symlink_to(out)
    (ws / "src" / "inner_link.py").symlink_to(ws / "src" / "app.py")
    return ws, out


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "src/../../outside/secret.txt", "../../../../../../etc/passwd", "/etc/passwd"],
)
def test_dotdot_and_absolute_paths_outside_are_refused(layout, path):
    ws, _ = layout
    with pytest.raises(PathRefused, match="outside the workspace"):
        resolve_inside(ws, path)


def test_absolute_path_to_the_outside_folder_is_refused(layout):
    ws, out = layout
    with pytest.raises(PathRefused, match="outside the workspace"):
        resolve_inside(ws, str(out / "secret.txt"))


def test_absolute_path_inside_is_accepted(layout):
    ws, _ = layout
    assert resolve_inside(ws, str(ws / "src" / "app.py")) == (ws / "src" / "app.py").resolve()


def test_symlinked_file_leading_out_is_refused(layout):
    ws, _ = layout
    with pytest.raises(PathRefused, match="symlink"):
        resolve_inside(ws, "link_file.txt")
    with pytest.raises(SandboxError):
        regular_file_inside(ws, "link_file.txt")


def test_path_through_a_symlinked_directory_is_refused(layout):
    ws, _ = layout
    with pytest.raises(PathRefused, match="symlink"):
        resolve_inside(ws, "link_dir/deep/more.py")
    with pytest.raises(PathRefused):
        resolve_inside(ws, "link_dir")


def test_symlink_that_stays_inside_is_followed(layout):
    ws, _ = layout
    assert resolve_inside(ws, "src/inner_link.py") == (ws / "src" / "app.py").resolve()


def test_nul_byte_is_refused(layout):
    ws, _ = layout
    with pytest.raises(PathRefused, match="NUL"):
        resolve_inside(ws, "src/app.py\x00.txt")
    with pytest.raises(PathRefused, match="NUL"):
        workspace_root(f"{ws}\x00")


def test_tilde_expands_and_is_checked(layout, monkeypatch):
    ws, out = layout
    monkeypatch.setenv("HOME", str(out))
    with pytest.raises(PathRefused, match="outside the workspace"):
        resolve_inside(ws, "~/secret.txt")
    monkeypatch.setenv("HOME", str(ws))
    assert resolve_inside(ws, "~/src/app.py") == (ws / "src" / "app.py").resolve()


def test_symlink_loop_is_refused_not_a_crash(layout):
    ws, _ = layout
    (ws / "loop_a").symlink_to(ws / "loop_b")
    (ws / "loop_b").symlink_to(ws / "loop_a")
    with pytest.raises(SandboxError):
        regular_file_inside(ws, "loop_a")


def test_overlong_path_is_refused(layout):
    ws, _ = layout
    with pytest.raises(PathRefused, match="longer than"):
        resolve_inside(ws, "a/" * 3000)


def test_missing_workspace_and_missing_file_are_not_found(layout, tmp_path):
    ws, _ = layout
    with pytest.raises(PathNotFound, match="not an existing directory"):
        workspace_root(tmp_path / "nope")
    with pytest.raises(PathNotFound, match="no such file"):
        regular_file_inside(ws, "src/missing.py")
    with pytest.raises(PathNotFound, match="not a regular file"):
        regular_file_inside(ws, "src")


def test_read_bytes_inside_reads_only_regular_files_inside(layout):
    ws, _ = layout
    data, size = read_bytes_inside(ws, "src/app.py", 5)
    assert data == b"def o" and size == len("def ok():\n    return 1\n")
    with pytest.raises(PathRefused):
        read_bytes_inside(ws, "link_file.txt", 100)


def test_read_tool_refuses_every_escape(layout):
    ws, _ = layout
    for p in ("../outside/secret.txt", "link_file.txt", "link_dir/secret.txt", "/etc/passwd"):
        with pytest.raises(PathRefused):
            read_lines(ws, p)


def test_rg_does_not_follow_symlinks_while_walking(layout):
    """The secret is reachable through link_file.txt and link_dir/; rg must not find it."""
    ws, _ = layout
    assert search(ws, SECRET).matches == []
    names = [m["file"] for m in glob_files(ws, "*").matches]
    assert "src/app.py" in names
    assert not any("secret" in n or n.startswith("link_dir") or "more.py" in n for n in names)


def test_rg_search_roots_are_checked_by_the_sandbox(layout):
    ws, _ = layout
    for root in ("link_dir", "..", "/", str(layout[1])):
        with pytest.raises(PathRefused):
            search(ws, SECRET, paths=[root])
    with pytest.raises(PathRefused):
        glob_files(ws, "../*.txt")
    with pytest.raises(PathRefused):
        glob_files(ws, "/etc/*")


def test_rg_ignores_a_config_file_that_would_add_follow(layout, monkeypatch):
    """RIPGREP_CONFIG_PATH could smuggle in --follow; --no-config shuts it out."""
    ws, out = layout
    cfg = out / "rgrc"
    cfg.write_text("--follow\n--hidden\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(cfg))
    assert search(ws, SECRET).matches == []


def test_search_paths_are_workspace_relative(layout):
    ws, _ = layout
    res = search(ws, "return 1")
    assert [(m["file"], m["line"]) for m in res.matches] == [("src/app.py", 2)]
    assert all(not os.path.isabs(m["file"]) for m in res.matches)
