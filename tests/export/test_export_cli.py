"""``overlap-lab export``: what a course author types, and what it says when it cannot."""

from __future__ import annotations

import pytest

from app.cli import build_parser, main


def test_export_takes_a_folder_a_live_address_and_single_files(tmp_path):
    args = build_parser().parse_args(
        ["export", str(tmp_path / "site"), "--live", "https://lab.example.org", "--single-file"]
    )
    assert (args.dir, args.live, args.single_file) == (
        tmp_path / "site",
        "https://lab.example.org",
        True,
    )
    plain = build_parser().parse_args(["export", "site"])
    assert (plain.live, plain.single_file) == ("", False)


def test_a_live_address_that_is_not_http_is_refused_with_a_message(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path / "site"), "--live", "lab.example.org"])
    assert "--live must be an http(s) address" in str(exc.value)
    assert not (tmp_path / "site").exists()


def test_a_file_in_place_of_the_folder_is_refused_with_a_message(tmp_path):
    taken = tmp_path / "site"
    taken.write_text("not a folder")
    with pytest.raises(SystemExit) as exc:
        main(["export", str(taken)])
    assert f"{taken} is a file, not a folder" in str(exc.value)
    assert taken.read_text() == "not a folder"
