"""``overlap-lab import`` and ``summary`` on the hand-built NCCL profiles and a recorded trace."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_trace_summary import DOCUMENT

from app.cli import main
from traces import load_trace

PROFILES = Path(__file__).parent / "profiles"
FILES = [PROFILES / "nccl_rank0.json", PROFILES / "nccl_rank1.json.gz"]


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code


def test_import_writes_a_valid_trace(tmp_path, capsys) -> None:
    out = tmp_path / "run.json"
    assert _run(["import", *map(str, FILES), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"wrote {out}: 3 iterations, ranks 0, 1, 3 buckets (1+2+0.25 MiB), device times" in said
    trace = load_trace(out)  # validates
    assert trace.bucket_bytes.tolist() == [1 << 20, 2 << 20, 1 << 18]
    assert not out.with_name("run.json.partial").exists()


def test_import_refuses_to_overwrite_without_force(tmp_path, capsys) -> None:
    out = tmp_path / "run.json"
    out.write_text("keep me")
    assert _run(["import", str(FILES[0]), "--out", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert out.read_text() == "keep me"
    assert _run(["import", str(FILES[0]), "--out", str(out), "--force"]) == 0
    assert load_trace(out).n_ranks == 1


def test_import_of_a_bad_file_says_why_and_writes_nothing(tmp_path, capsys) -> None:
    bad = tmp_path / "rank0.json.gz"
    bad.write_bytes(gzip.compress(FILES[0].read_bytes())[:500])
    out = tmp_path / "run.json"
    assert _run(["import", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("overlap-lab import: error: rank0.json.gz: ")
    assert "cut short" in err and "Traceback" not in err
    assert not out.exists()


def test_summary_json_of_an_imported_trace_and_of_the_profiles(tmp_path, capsys) -> None:
    out = tmp_path / "run.json"
    assert _run(["import", *map(str, FILES), "--out", str(out)]) == 0
    capsys.readouterr()
    assert _run(["summary", str(out), "--json"]) == 0
    from_trace = json.loads(capsys.readouterr().out)
    assert _run(["summary", *map(str, FILES), "--json"]) == 0
    from_profiles = json.loads(capsys.readouterr().out)
    assert from_trace["median"] == from_profiles["median"]
    first = from_trace["iterations"][0]
    assert first["iteration"] == 10
    rank0 = first["ranks"][0]
    assert set(rank0) >= {
        "rank",
        "buckets",
        "backward_end_ms",
        "communication_end_ms",
        "exposed_tail_ms",
        "step_ms",
        "overlap",
    }
    assert rank0["buckets"][0] == {
        "index": 0,
        "mib": 1.0,
        "start_ms": 3.2,
        "end_ms": 4.7,
        "launch_ms": 3.2,
        # rank 1's steps are 50 us later: rank 0's kernel waits 50 us for it to join
        "peer_wait_ms": 0.05,
    }
    assert (rank0["exposed_tail_ms"], rank0["step_ms"]) == (1.4, 7.6)
    assert rank0["peer_wait_ms"] == 0.15  # three buckets, 50 us each
    assert first["ranks"][1]["peer_wait_ms"] == 0.0
    assert from_profiles["iterations"][0]["ranks"][0]["peer_wait_ms"] == 0.15


def test_summary_text_of_a_recorded_trace(tmp_path, capsys) -> None:
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(DOCUMENT))
    assert _run(["summary", str(path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("overlap-lab recorder, host times, ranks 0, 1")
    assert "rank 0: backward end 5.000, communication end 8.000, exposed tail 3.000" in text
    assert "bucket 0: 2.000 MiB, all-reduce 3.500 to 6.000" in text
    assert "median: backward end 5.250" in text


def test_summary_refuses_a_trace_mixed_with_profiles(tmp_path, capsys) -> None:
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(DOCUMENT))
    assert _run(["summary", str(path), str(FILES[0])]) == 2
    assert "not both" in capsys.readouterr().err


def test_summary_of_a_missing_or_foreign_file(tmp_path, capsys) -> None:
    assert _run(["summary", str(tmp_path / "nope.json")]) == 2
    assert "nope.json: cannot read" in capsys.readouterr().err
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"hello": "world"}')
    assert _run(["summary", str(foreign)]) == 2
    assert "not a profiler trace" in capsys.readouterr().err
    shutil.copy(FILES[0], tmp_path / "ok.json")
    assert _run(["summary", str(tmp_path / "ok.json")]) == 0


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path) -> None:
    # `overlap-lab summary ... | head -1`: the pipe closes after the first line, while
    # most of the summary (about 1 MB, far more than a pipe holds) is still unwritten.
    from synthetic import synthetic_document

    big = tmp_path / "big.json"
    big.write_text(json.dumps(synthetic_document([1] * 12, iterations=400)))
    with subprocess.Popen(
        [sys.executable, "-m", "app.cli", "summary", str(big), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    assert first.strip() == b"{"
    assert "Traceback" not in err and "BrokenPipeError" not in err, err[-1500:]
    assert code == 1
