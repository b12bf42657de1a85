"""``overlap-lab fit``, ``predict``, ``chrome`` and ``record``'s checks, on synthetic traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic import QUANTITY_NAMES, edited, synthetic_document

from app.cli import main


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("traces")
    out = {}
    for i, (name, per) in enumerate(
        {"one": [1] * 12, "all": [12], "three": [3] * 4, "mixed": [5, 5, 2]}.items()
    ):
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(synthetic_document(per, seed=i, iterations=6)))
    return out


def test_fit_prints_the_numbers_and_their_quality(files, capsys) -> None:
    assert _run(["fit", str(files["one"]), str(files["all"]), "--resamples", "3"]) == 0
    text = capsys.readouterr().out
    assert "Fitted on one.json, all.json: 12 iterations" in text
    for label in (
        "backward per layer",
        "per-transfer overhead",
        "bandwidth",
        "contention",
        "transfer contention",
        "gradient intervals   R²",
        "transfer durations   R²",
    ):
        assert label in text
    assert "1.200 GB/s" in text  # the synthetic truth
    # These synthetic traces time nothing alone, so there is no copy-back rate to report.
    assert "copy-back                not measured" in text


def test_fit_json(files, capsys) -> None:
    assert _run(["fit", str(files["one"]), str(files["all"]), "--json", "--resamples", "3"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["overhead_ms"] == pytest.approx(1.0, rel=0.05)
    assert d["contention"] == pytest.approx(0.5, rel=0.1)
    assert set(d["backward_quality"]) == {"r2", "rms_ms", "samples"}


def test_predict_json_has_the_documented_shape(files, capsys) -> None:
    argv = ["predict", "--fit", str(files["one"]), str(files["all"]), "--target"]
    assert _run([*argv, str(files["three"]), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["quantities"]) == QUANTITY_NAMES
    for q in d["quantities"].values():
        assert {"predicted", "measured", "error_pct"} <= set(q)
        assert all(isinstance(q[k], float) for k in ("predicted", "measured", "error_pct"))
        assert q["error_pct"] == pytest.approx(
            100 * (q["predicted"] - q["measured"]) / q["measured"], abs=0.02
        )
    assert d["target"] == "three.json"


def test_predict_prints_a_table(files, capsys) -> None:
    argv = ["predict", "--fit", str(files["one"]), str(files["all"]), "--target"]
    assert _run([*argv, str(files["mixed"])]) == 0
    text = capsys.readouterr().out
    assert "Predicting mixed.json (3 buckets: 5+5+2 parameters)" in text
    for label in ("backward return", "communication end", "exposed tail", "step"):
        assert any(line.strip().startswith(label) and "%" in line for line in text.splitlines())


def test_a_bad_trace_is_an_error_naming_the_field(files, tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    doc = json.loads(files["one"].read_text())
    bad.write_text(json.dumps(edited(doc, "iterations[0].ranks[0].buckets[0].bytes", -4)))
    assert _run(["fit", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "error: trace.iterations[0].ranks[0].buckets[0].bytes: must be at least 1" in err
    assert "Traceback" not in err


def test_chrome_export_writes_and_will_not_overwrite(files, tmp_path, capsys) -> None:
    out = tmp_path / "run.trace.json"
    assert _run(["chrome", str(files["three"]), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["traceEvents"]
    assert _run(["chrome", str(files["three"]), "--out", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert _run(["chrome", str(files["three"]), "--out", str(out), "--force"]) == 0


def test_record_refuses_to_overwrite_before_starting(tmp_path, capsys) -> None:
    out = tmp_path / "exists.json"
    out.write_text("keep me")
    assert _run(["record", "--bucket-cap-mb", "12", "--out", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert out.read_text() == "keep me"


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "--bucket-cap-mb", "0", "--out", "x.json"],
        ["record", "--bucket-cap-mb", "4", "--warmup", "0", "--out", "x.json"],
        ["record", "--bucket-cap-mb", "4"],
        ["predict", "--fit", "a.json"],
        ["record", "--bucket-cap-mb", "4", "12", "--out", "x.json"],
        ["record", "--bucket-cap-mb", "4", "--widths", "512", "--out", "x.json"],
        ["record", "--bucket-cap-mb", "4", "--isolated-sizes", "-1", "--out", "x.json"],
        ["record", "--bucket-cap-mb", "4", "--widths", "512", "0", "--out", "x.json"],
        ["fit", "a.json", "--resamples", "-1"],
    ],
)
def test_bad_arguments_are_refused(argv, capsys) -> None:
    assert _run(argv) == 2
    assert "error" in capsys.readouterr().err


def test_trim_keeps_the_quietest_iterations(tmp_path, capsys) -> None:
    doc = synthetic_document([12], iterations=5)
    for i, load in enumerate([0.5, 0.0, 0.3, 0.05, None]):
        doc = edited(doc, f"iterations[{i}].other_load", load)
    src, out = tmp_path / "raw.json", tmp_path / "trimmed.json"
    src.write_text(json.dumps(doc))
    assert _run(["trim", str(src), "--quietest", "3", "--out", str(out)]) == 0
    trimmed = json.loads(out.read_text())
    assert [it["iteration"] for it in trimmed["iterations"]] == [6, 8, 9]
    assert "Kept the 3 iterations of 5 with the least load" in trimmed["metadata"]["note"]
    assert "at most 5% of the cores" in capsys.readouterr().out
    assert _run(["trim", str(src), "--quietest", "3", "--out", str(out)]) == 2


def test_traces_of_one_run_are_trimmed_together(tmp_path) -> None:
    a = synthetic_document([12], iterations=4)
    b = synthetic_document([3] * 4, iterations=4)
    for i, (la, lb) in enumerate([(0.0, 0.6), (0.1, 0.1), (0.5, 0.0), (0.2, 0.2)]):
        a = edited(a, f"iterations[{i}].other_load", la)
        b = edited(b, f"iterations[{i}].other_load", lb)
    paths = [tmp_path / n for n in ("a.json", "b.json", "a2.json", "b2.json")]
    paths[0].write_text(json.dumps(a))
    paths[1].write_text(json.dumps(b))
    argv = ["trim", str(paths[0]), str(paths[1]), "--quietest", "2", "--out"]
    assert _run([*argv, str(paths[2]), str(paths[3])]) == 0
    for p in paths[2:]:
        doc = json.loads(p.read_text())
        assert [it["iteration"] for it in doc["iterations"]] == [6, 8]  # worst loads 0.1, 0.2
        assert "in 2 traces of one run (at most 20% of the cores)" in doc["metadata"]["note"]


def test_fit_reports_intervals_and_what_it_could_not_identify(files, capsys) -> None:
    assert _run(["fit", str(files["three"]), str(files["all"]), "--resamples", "5"]) == 0
    text = capsys.readouterr().out
    assert "[low, high]: 90 % bootstrap interval over 5 resamples" in text
    assert (
        "overhead and bandwidth from the traces' buckets (no all-reduces timed alone), "
        "for buckets of 12 to 48 MiB" in text
    )
    assert (
        "Not identified by these traces:\n  - overhead and bandwidth: the traces hold no "
        "all-reduces timed alone" in text
    )
    assert _run(["fit", str(files["three"]), str(files["all"]), "--resamples", "0"]) == 0
    assert "bootstrap" not in capsys.readouterr().out


def test_predict_refuses_what_the_fit_cannot_constrain(files, capsys) -> None:
    # Fitted on 12 and 48 MiB buckets without all-reduces timed alone: 4 MiB is outside.
    argv = [
        "predict",
        "--fit",
        str(files["three"]),
        str(files["all"]),
        "--target",
        str(files["one"]),
    ]
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "overlap-lab predict: error: one.json (12 buckets: 1+1+1+1+1+1+1+1+1+1+1+1 parameters): "
        "the fit cannot predict it: buckets of 4 MiB lie outside the fitted buckets' sizes "
        "(12 MiB to 48 MiB)"
    )
    assert _run([*argv, "--extrapolate"]) == 0
    out = capsys.readouterr().out
    assert "(extrapolated: the fit cannot constrain it: buckets of 4 MiB lie outside" in out
