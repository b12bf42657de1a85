"""The course-site integrations' blocks: checked like ``export --state``, placed by relative path.

The builds themselves, served and opened in Chromium, are in
``tests/ui/test_course_sites_ui.py``; here a bad block must stop a build, naming
the page and line.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.integrations.embed_block import EmbedBlock, EmbedError, parse_block_text, root_of


def test_a_block_keeps_its_settings_in_order_and_places_the_copys_page():
    block = EmbedBlock.of(
        "bucket-timeline",
        parse_block_text("preset: Latency-bound\n\n# a note\nlayers_per_bucket: 2"),
    )
    assert block.state == "bucket-timeline?preset=Latency-bound&layers_per_bucket=2"
    markup = block.html("../../")
    assert (
        'src="../../overlap-lab/bucket-timeline/index.html?preset=Latency-bound&amp;layers_per_bucket=2"'
        in markup
    )
    assert 'title="Bucket timeline"' in markup
    assert (
        EmbedBlock.of("queue-lab", {})
        .html("")
        .startswith('<iframe src="overlap-lab/queue-lab/index.html"')
    )


def test_a_blocks_theme_goes_to_the_page_not_the_widgets_state():
    block = EmbedBlock.of("bucket-timeline", parse_block_text("theme: dark\nlayers_per_bucket: 2"))
    assert block.state == "bucket-timeline?layers_per_bucket=2"
    assert "bucket-timeline/index.html?layers_per_bucket=2&amp;theme=dark" in block.html("")
    assert "index.html?theme=light" in EmbedBlock.of("queue-lab", {"theme": "light"}).html("")
    with pytest.raises(EmbedError, match="Ignored theme=dusk: Theme is one of auto, light, dark"):
        EmbedBlock.of("queue-lab", {"theme": "dusk"})


@pytest.mark.parametrize(
    ("page", "root"),
    [("index.html", ""), ("", ""), ("lessons/intro.html", "../"), ("lessons/intro/", "../../")],
)
def test_the_root_of_a_page_is_one_step_up_per_folder(page, root):
    assert root_of(page) == root


@pytest.mark.parametrize(
    ("widget", "text", "says"),
    [
        ("bucket-timelines", "", "unknown widget “bucket-timelines”"),
        ("bucket-timeline", "layers: 2", "unknown setting “layers”"),
        ("bucket-timeline", "layers_per_bucket: many", "layers_per_bucket=many"),
        ("bucket-timeline", "preset: Slow", "unknown preset “Slow”"),
    ],
)
def test_a_bad_block_says_what_is_wrong(widget, text, says):
    with pytest.raises(EmbedError, match=says):
        EmbedBlock.of(widget, parse_block_text(text))


def test_a_line_that_is_not_key_value_is_refused():
    with pytest.raises(EmbedError, match="“preset Latency-bound” is not a “key: value” line"):
        parse_block_text("preset Latency-bound")


def _build(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_mkdocs_stops_on_a_bad_block_naming_the_page_and_line(tmp_path):
    pytest.importorskip("mkdocs")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(
        "# A course\n\nProse.\n\n```overlap-lab bucket-timeline\npreset: Slow\n```\n"
    )
    (tmp_path / "mkdocs.yml").write_text("site_name: A course\nplugins:\n  - overlap-lab\n")
    done = _build([sys.executable, "-m", "mkdocs", "build"], tmp_path)
    assert done.returncode != 0
    assert "index.md:5: overlap-lab: " in done.stderr + done.stdout
    assert "unknown preset “Slow”" in done.stderr + done.stdout
    assert not (tmp_path / "site" / "overlap-lab").exists()


def test_sphinx_reports_a_bad_directive_at_its_file_and_line(tmp_path):
    pytest.importorskip("sphinx")
    (tmp_path / "conf.py").write_text('extensions = ["app.integrations.sphinx_directive"]\n')
    (tmp_path / "index.rst").write_text(
        "A course\n========\n\nProse.\n\n.. overlap-lab:: ranks\n\n   scenario: Nowhere\n"
    )
    done = _build([sys.executable, "-m", "sphinx", "-W", "-b", "html", ".", "_build"], tmp_path)
    assert done.returncode != 0
    assert re.search(r"index\.rst:6: ?(ERROR: )?overlap-lab: ", done.stderr), done.stderr
    assert "Nowhere" in done.stderr
