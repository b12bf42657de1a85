"""``overlap-lab export``: what a course author types, and what it says when it cannot."""

from __future__ import annotations

import gzip
import json

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


def test_export_writes_a_courses_own_lessons_beside_or_without_the_products(tmp_path, capsys):
    own = tmp_path / "course"
    own.mkdir()
    (own / "our-first.md").write_text(
        "---\ntitle: Our first\nsummary: Ours.\n---\nProse.\n\n```widget queue-lab\n"
        "arrival: 4\n```\n",
        encoding="utf-8",
    )
    out = tmp_path / "copy"
    main(["export", str(out), "--lessons", str(own), "--no-builtin-lessons"])
    assert sorted(p.name for p in (out / "lessons").iterdir()) == ["our-first"]
    assert (out / "lessons" / "our-first" / "states.json.gz").stat().st_size > 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="./lessons/our-first/index.html"' in index
    assert "wrote " in capsys.readouterr().out


def _records(out, name: str) -> set[str]:
    states = json.loads(gzip.decompress((out / name / "states.json.gz").read_bytes()))
    return {r["query"] for r in states["widgets"][0]["records"]}


def test_export_says_each_page_as_written_and_holds_an_authors_states(tmp_path, capsys):
    own = tmp_path / "course"
    own.mkdir()
    (own / "ours.md").write_text(
        "---\ntitle: Ours\nsummary: Ours.\n---\nProse.\n\n```widget queue-lab\ninitial: 6\n```\n",
        encoding="utf-8",
    )
    out = tmp_path / "course-copy"
    states = ["--state", "queue-lab?arrival=5&initial=2", "--state", "bucket-timeline?ranks=16"]
    main(["export", str(out), "--lessons", str(own), "--no-builtin-lessons", *states])
    lines = capsys.readouterr().out.splitlines()
    pages = [line.split()[:2] for line in lines if line.startswith("[")]
    folders = ["bucket-timeline/", "queue-lab/", "ranks/", "trace/", "lessons/ours/"]
    assert pages == [[f"[{n}/5]", folder] for n, folder in enumerate(folders, 1)], lines
    assert lines[-1].startswith("wrote ")
    assert "arrival=5&service=3&initial=2" in _records(out, "queue-lab")
    held = _records(out, "bucket-timeline")
    assert "preset=Overlap+works&ranks=16" in held
    assert "preset=Overlap+works&layers_per_bucket=6&ranks=16" in held  # an axis from it
    embed = (out / "embed.js").read_text(encoding="utf-8")
    assert "overlap-lab:height" in embed and "document.currentScript" in embed


@pytest.mark.parametrize(
    ("state", "said"),
    [
        ("bucket?ranks=16", "no widget 'bucket'"),
        ("bucket-timeline", "no settings after 'bucket-timeline'"),
        ("bucket-timeline?rank=16", "Ignored unknown setting “rank”"),
        ("bucket-timeline?ranks=lots", "Ignored ranks=lots"),
        ("bucket-timeline?preset=Nope", "Ignored unknown preset “Nope”"),
    ],
)
def test_a_state_that_is_not_a_widgets_settings_is_refused_naming_it(tmp_path, state, said):
    with pytest.raises(SystemExit) as exc:
        main(["export", str(tmp_path / "course-copy"), "--state", state])
    assert "--state" in str(exc.value) and said in str(exc.value)
    assert not (tmp_path / "course-copy").exists()
