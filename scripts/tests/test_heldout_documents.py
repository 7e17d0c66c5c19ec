"""Tests of the held-out batches' documents (`heldout_json.py`) and the mean of the two graph
steps the held-out documents and the H100 tally count (`validate_all.mean_step`): no GPU, no
PyTorch. Run by `.ci/run`:

    python3 -m pytest scripts/tests -q
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_runner import SCRIPTS, run_script  # noqa: E402


def markdown_of(run, group, out):
    """`heldout_json.py --markdown` over `run`'s `group` with placeholder metadata, writing the
    document to `out`: the finished process and the document's rows."""
    p = run_script("heldout_json.py", "--run", run, "--group", group, "--gpu", "g",
                   "--build", "b", "--script", "s", "--run-note", "r", "--out", out,
                   "--markdown")
    assert p.returncode == 0, p.stderr
    return p, json.load(open(out))[group]["rows"]


def test_a_held_out_batch_document_is_its_stored_run_again(tmp_path):
    # Batch 52's document, committed by hand from its run, is what the builder makes of the
    # stored run: the same walks, figures and stand-in counts.
    import heldout_json
    repo = os.path.dirname(SCRIPTS)
    committed = json.load(open(os.path.join(repo, "docs", "validation-heldout-52-h200.json")))
    meta = committed["heldout52"]
    out = tmp_path / "b52.json"
    p = run_script("heldout_json.py", "--run", os.path.join(repo, "docs", "stored",
                                                            "heldout-52-a3a2636"),
                   "--group", "heldout52", "--gpu", meta["gpu"], "--build", meta["build"],
                   "--script", meta["script"], "--run-note", meta["run"], "--out", out)
    assert p.returncode == 0, p.stderr
    made = json.load(open(out))
    assert made["device"] == committed["device"]
    assert [r["walk"] for r in made["heldout52"]["rows"]] == [r["walk"] for r in meta["rows"]]
    for got, want in zip(made["heldout52"]["rows"], meta["rows"]):
        assert set(got) == set(want), got["walk"]
        for k, v in want.items():
            assert got[k] == (pytest.approx(v) if isinstance(v, float) else v), (got["walk"], k)
    assert heldout_json.err(1.1, 1.0) == pytest.approx(10.0)


def test_heldout_json_markdown_sets_out_batch_52_as_the_document_does(tmp_path):
    # The committed section of batch 52 was written by hand from the same run: the printed
    # table must match it row for row, bold marks and minus signs included.
    repo = os.path.dirname(SCRIPTS)
    p, _ = markdown_of(os.path.join(repo, "docs", "stored", "heldout-52-a3a2636"), "heldout52",
                       tmp_path / "b52.json")
    printed = [line for line in p.stdout.splitlines() if line.startswith("|")]
    doc = open(os.path.join(repo, "docs", "validation-h200.md"), encoding="utf-8").read()
    section = doc[doc.index("## Held-out batch 52"):]
    section = section[:section.index("\n## ", 1)]
    committed = [line for line in section.splitlines() if line.startswith("|")]
    assert printed == committed
    assert "`replay` 4 of 6 within 5%, savings 6 of 6, `--summary` 5 of 6." in p.stdout
    assert "The mean of the two graph steps" in p.stdout and "of 6 within 5%." in p.stdout
    assert "With every stand-in a spin: \u22122" in p.stdout


def test_heldout_json_needs_its_run_and_says_so(tmp_path):
    p = run_script("heldout_json.py", "--run", tmp_path, "--group", "heldout99", "--gpu", "g",
                   "--build", "b", "--script", "s", "--run-note", "r", "--out", tmp_path / "o")
    assert p.returncode != 0
    assert "no " in p.stderr and "validation.json" in p.stderr
    assert "Traceback" not in p.stderr


def test_heldout_json_sets_out_the_grid_table_prices_where_the_run_holds_them(tmp_path):
    # A run made with validate.py --also-grid-nodes: each row carries the table's prices and
    # the markdown counts them beside the default's.
    import shutil
    repo = os.path.dirname(SCRIPTS)
    run = tmp_path / "run"
    shutil.copytree(os.path.join(repo, "docs", "stored", "heldout-52-a3a2636"), run)
    path = run / "heldout52" / "validation.json"
    records = json.load(open(path))
    for r in records:
        if "replay" in r:
            real = r.get("graph_step_other_stream_ms", r["graph_step_ms"])
            r["with_grid_nodes"] = {"table": "grid-nodes-h100.json",
                                    "replay": {"graph_step_ms": real * 1.02},
                                    "summary": {"graph_step_ms": real * 1.2}}
    json.dump(records, open(path, "w"))
    p, rows = markdown_of(run, "heldout52", tmp_path / "b52.json")
    priced = [r for r in rows if "replay_with_table_err" in r]
    assert priced and all(abs(r["replay_with_table_err"] - 2.0) < 1e-6 for r in priced)
    n = len(priced)
    assert (f"With the grid table grid-nodes-h100.json: `replay` {n} of {n} within 5%, "
            f"`--summary` 0 within 10%, their mean 0 within 5%.") in p.stdout


def test_the_mean_holds_the_replayed_half_at_the_models_streamed_floor():
    from validate_all import mean_step, record_errors
    replay, floored = {"graph_step_ms": 0.2}, {"graph_step_ms": 0.4,
                                               "graph_step_streamed_floor_ms": 0.4}
    # As `replay` takes it (StepPrice::with_model): the replayed half no lower than the floor.
    assert mean_step(replay, floored) == 0.4
    assert abs(mean_step(replay, {"graph_step_ms": 0.4}) - 0.3) < 1e-12
    assert abs(mean_step({"graph_step_ms": 0.5}, floored) - 0.45) < 1e-12
    assert mean_step({}, floored) is None
    record = {"graph_step_ms": 0.4, "eager_step_ms": 1.0, "replay": replay, "summary": floored}
    e = record_errors(record)
    assert abs(e["mean_err"]) < 1e-9 and abs(e["replay_err"] + 50.0) < 1e-9


def test_heldout_json_prints_a_saving_without_an_error_where_the_real_graph_saved_nothing(
        tmp_path):
    # H100 batch 98: the real graph of the masked fills cost more than their eager step, so
    # their saving has no error; the table prints the replayed saving alone and the count
    # of savings within 10% is out of the walks that have one.
    repo = os.path.dirname(SCRIPTS)
    p, rows = markdown_of(os.path.join(repo, "docs", "cross-device", "h100-heldout-98-351bc80"),
                          "heldout98", tmp_path / "b98.json")
    unsaved = [r for r in rows if r["saving_err"] is None]
    assert [r["walk"] for r in unsaved] == ["lx_two_lanes_of_masked_fills_fp16_8m"]
    assert unsaved[0]["real_saving_ms"] < 0
    line = next(x for x in p.stdout.splitlines() if "masked_fills" in x)
    assert f"| {unsaved[0]['replay_saving_ms']:.3f} |" in line
    assert "savings 3 of 5," in p.stdout


def test_the_grid_tables_mean_is_held_at_the_models_floor_as_the_defaults_is(tmp_path):
    # H100 batch 98 priced again with the grid table: where the table's offline step is the
    # floor of lanes past the L2, its mean holds the replayed half at that floor, as `replay`
    # and the default's mean do.
    repo = os.path.dirname(SCRIPTS)
    p, rows = markdown_of(os.path.join(repo, "docs", "cross-device", "h100-heldout-98-351bc80"),
                          "heldout98", tmp_path / "b98.json")
    held = [r for r in rows if "mean_with_table_err" in r]
    assert len(held) == 4
    for r in held:
        # Every replay there came under the floor: the held mean is the table's model.
        assert r["replay_with_table_ms"] < r["summary_with_table_ms"]
        assert r["mean_with_table_err"] == pytest.approx(r["summary_with_table_err"])
    assert "their mean 1 within 5%." in p.stdout
