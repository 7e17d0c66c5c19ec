"""The README's validation tables are what their raw-numbers documents give
(validation_tables.py), and the reader of the held-out documents takes each of their forms."""
import json
import os
import subprocess
import sys

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)

import validation_tables  # noqa: E402


def test_the_readmes_held_out_table_is_what_the_documents_give():
    runs = validation_tables.first_runs(ROOT)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert f"**Held out: {len(runs)} walks, each on its first run**" in readme
    table = validation_tables.held_out_table(runs)
    assert table in readme, f"the README's held-out table should be:\n{table}"


def test_the_price_quotes_what_the_record_says_of_far_apart_replays_and_models():
    (far, far_within), (near, near_within) = validation_tables.far_apart(
        validation_tables.first_runs(ROOT))
    with open(os.path.join(ROOT, "crates", "launch-econ", "src", "price.rs"),
              encoding="utf-8") as f:
        source = f.read()
    phrase = (f"on the {far} held-out H200 walks whose two prices differed by 20% or more, the "
              f"mean came within 5% of the real graph on {far_within}, against {near_within} of "
              f"the {near} others")
    assert phrase in source, f"price::FAR_APART_RECORD should say:\n{phrase}"
    assert "pub const FAR_APART: f64 = 0.2;" in source


def test_each_form_of_row_gives_its_errors():
    old = {"walk": "a", "streams": 2, "replay_err_pct": -3.0, "replay_saving_err_pct": 1.0,
           "summary_err_pct": 4.0}
    new = {"walk": "b", "streams": [7, 13], "same_walk": False, "replay_err": 1.0,
           "saving_err": None, "summary_err": -2.0}
    replay_failed = {"walk": "c", "streams": 3, "replay_error": "boom", "summary_err_pct": 9.0}
    record = {"walk": "d", "eager_step_ms": 2.0, "graph_step_ms": 1.0,
              "graph_step_other_stream_ms": 0.8, "walk_summary": {"streams": [7]},
              "replay": {"graph_step_ms": 0.84, "saving_ms": 1.32},
              "summary": {"graph_step_ms": 0.76}}
    failed = {"walk": "e", "error": "ValueError"}
    got = [validation_tables.first_run("b1", r) for r in (old, new, replay_failed, record, failed)]
    assert [(g["streams"], g["same_walk"], g["failed"]) for g in got] == [
        (2, True, False), (2, False, False), (3, True, False), (1, True, False), (None, True, True)]
    assert (got[0]["replay"], got[0]["saving"], got[0]["summary"]) == (-3.0, 1.0, 4.0)
    assert got[2]["replay"] is None and got[2]["summary"] == 9.0
    assert abs(got[3]["replay"] - 5.0) < 1e-9 and abs(got[3]["summary"] + 5.0) < 1e-9
    assert abs(got[3]["saving"] - 10.0) < 1e-9


def test_failures_reruns_and_the_table_they_make(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "validation-h200.md").write_text(
        "| walk | kernels | streams |\n|---|---:|---:|\n| x_lane | 9 | 3 |\n")
    row = lambda walk, **kw: dict({"walk": walk, "replay_err": 1.0, "saving_err": 2.0,  # noqa: E731
                                   "summary_err": 3.0, "streams": 1}, **kw)
    (docs / "validation-heldout-20-21-h200.json").write_text(json.dumps({"batches": {
        "heldout19": {"rows": [row("one")], "failed": ["hu_phi3_decode_b2"]},
        "heldout19_phi3": {"rows": [row("hu_phi3_decode_b2", replay_err=-7.0)]},
    }}))
    (docs / "validation-heldout-30-h200.json").write_text(json.dumps({"heldout30": {"rows": [
        row("x_lane", streams=None, replay_err=30.0, summary_err=-20.0),
        row("other_graph", streams=[1, 2], same_walk=False),
        {"walk": "iq_glm_decode_b4", "failed": "config"},
    ]}}))
    runs = validation_tables.first_runs(str(tmp_path))
    assert sorted(r["walk"] for r in runs) == [
        "hu_phi3_decode_b2", "iq_glm_decode_b4", "one", "other_graph", "x_lane"]
    assert {r["walk"]: r["streams"] for r in runs}["x_lane"] == 3
    assert validation_tables.held_out_table(runs).split("\n")[0] == (
        "| | target | one stream (3) | several streams "
        "(2; one whose graph ran another walk not counted) |")
    replay_row = validation_tables.held_out_table(runs).split("\n")[2]
    assert replay_row == ("| graph step, `replay` | within 5% | 1 (−7.0 … +1.0%; one walk "
                          "failed to run) | 0 (+30.0 … +30.0%) |")


def test_a_row_of_no_known_form_is_refused():
    try:
        validation_tables.first_run("b", {"walk": "w", "kernels": 3})
    except ValueError as e:
        assert "b/w: a row of no known form (kernels, walk)" in str(e)
    else:
        raise AssertionError("no error")


def record(walk, **kw):
    """A validate.py record of a walk that ran."""
    return dict({
        "walk": walk, "eager_step_ms": 2.0, "graph_step_ms": 1.0, "same_walk": True,
        "walk_summary": {"kernels": 10, "streams": [7, 13]},
        "replay": {"graph_step_ms": 1.02, "saving_ms": 0.98},
        "summary": {"graph_step_ms": 0.95}, "trace_only": {"eager_step_ms": 2.5},
    }, **kw)


def test_a_batchs_failed_walks_reach_its_document_and_the_record(tmp_path):
    import heldout_json
    group = tmp_path / "run" / "heldout99"
    group.mkdir(parents=True)
    replay_failed = record("b")
    del replay_failed["replay"]
    replay_failed["error"] = "launch-econ replay: CUDA_ERROR_ILLEGAL_ADDRESS"
    (group / "validation.json").write_text(json.dumps([
        record("a"), replay_failed, {"walk": "c", "error": "Traceback ... ImportError"}]))
    rows = heldout_json.rows(str(tmp_path / "run"), "heldout99")
    assert [r["walk"] for r in rows] == ["a", "b", "c"]
    assert rows[1]["replay_err"] is None and "ILLEGAL_ADDRESS" in rows[1]["replay_failed"]
    assert abs(rows[1]["summary_err"] + 5.0) < 1e-9 and rows[1]["streams"] == 2
    assert rows[2] == {"group": "heldout99", "walk": "c", "failed": "Traceback ... ImportError"}
    table = heldout_json.markdown(rows).split("\n")
    assert table[3] == "| b | — | 2 | 1.000 | replay failed | 0.950 (−5.0%) | | | |"
    assert table[4] == "| c | — | — | — | failed | | | | |"
    assert "`replay` 1 of 3 within 5%, savings 1 of 3, `--summary` 2 of 3." in table

    runs = [validation_tables.first_run("heldout99", r) for r in rows]
    assert [(r["failed"], r["replay"] is None, r["summary"] is None) for r in runs] == [
        (False, False, False), (False, True, False), (True, True, True)]


def test_a_failed_walk_of_no_known_stream_count_is_named(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "validation-h200.md").write_text("# log\n")
    (docs / "validation-heldout-99-h200.json").write_text(json.dumps(
        {"heldout99": {"rows": [{"group": "heldout99", "walk": "zz_new", "failed": "boom"}]}}))
    try:
        validation_tables.first_runs(str(tmp_path))
    except ValueError as e:
        assert "heldout99/zz_new: no stream count anywhere" in str(e)
    else:
        raise AssertionError("no error")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "validation_tables.py"),
                        "--root", str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1 and "zz_new" in p.stderr and "Traceback" not in p.stderr


def words(n):
    """`n` (1-999) as the README writes a count that opens a sentence: `Twenty-four`, `A
    hundred and two`, `Two hundred and four`."""
    if n >= 100:
        hundreds, rest = divmod(n, 100)
        head = "A hundred" if hundreds == 1 else f"{words(hundreds)} hundred"
        return head + (f" and {words(rest).lower()}" if rest else "")
    ones = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
            "eighteen", "nineteen"]
    tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
            "ninety"]
    text = ones[n] if n < 20 else tens[n // 10] + ("-" + ones[n % 10] if n % 10 else "")
    return text.capitalize()


def test_the_batches_not_yet_run_are_the_groups_the_record_lacks():
    import re
    import validate_all
    runs = validation_tables.first_runs(ROOT)
    # Batch names in the record: heldout-10, heldout-2-aa4970e, heldout59, ...
    recorded = {int(m.group(1)) for r in runs if (m := re.match(r"heldout-?(\d+)", r["batch"]))}
    pending = [(g, walks.count(",") + 1) for g, _, walks in validate_all.GROUPS
               if (m := re.fullmatch(r"heldout(\d+)", g)) and int(m.group(1)) not in recorded]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert words(24) == "Twenty-four" and words(6) == "Six"
    assert words(102) == "A hundred and two" and words(100) == "A hundred"
    assert words(204) == "Two hundred and four" and words(300) == "Three hundred"
    if not pending:
        assert "None is waiting to run" in readme and "more have not run yet" not in readme
        return
    said = readme[readme.index("more have not run yet") - 30:]
    said = said[:said.index("The method's figures")]
    count = sum(n for _, n in pending)
    assert f"{words(count)} more have not run yet" in said, (count, said)
    # Each pending group opens a row of the table that follows, in order.
    assert re.findall(r"\| `(heldout\d+)` \|", said) == [g for g, _ in pending]


def test_the_readmes_full_run_table_is_what_its_document_gives():
    import re
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    full = readme[readme.index("**Latest full run: "):]
    document = re.search(r"\(docs/(validation-[\w-]+-h200\.json)\)", full).group(1)
    table = validation_tables.full_run_table(os.path.join(ROOT, "docs", document))
    assert table in full.replace("**", ""), f"the README's full-run table should be:\n{table}"


def test_what_the_code_and_readme_say_of_the_mean_on_an_h100_is_what_the_runs_give():
    import h100_graph_step_choice as choice
    rs = choice.rows(ROOT)
    early = [r for r in rs if r["batch"] in ("60-63", "64")]
    later = [r for r in rs if r["batch"] not in ("60-63", "64")]
    t = choice.tally
    phrase = (f"the mean came within 10% of the real graph on {t(rs, 'mean', 10)} of {len(rs)} "
              f"held-out walks against {t(rs, 'replay', 10)} for the replay alone, within 5% on "
              f"{t(rs, 'mean', 5)} against {t(rs, 'replay', 5)}")
    with open(os.path.join(ROOT, "crates", "launch-econ", "src", "caveats.rs"),
              encoding="utf-8") as f:
        assert phrase in f.read(), f"caveats::no_profile_for_the_mean should say:\n{phrase}"
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    claim = (f"the mean came within 10% on {t(rs, 'mean', 10)} of {len(rs)} held-out walks' "
             f"first runs against {t(rs, 'replay', 10)} for the replay alone, within 5% on "
             f"{t(rs, 'mean', 5)} against {t(rs, 'replay', 5)}; batches 60–64, whose profiles "
             f"lacked the spin's measured ramp, favoured the replay, {t(early, 'replay', 5)} "
             f"against {t(early, 'mean', 5)} within 5%, every later batch together the mean, "
             f"{t(later, 'mean', 5)} against {t(later, 'replay', 5)}")
    assert claim in readme, f"the README should say:\n{claim}"
    first, last = rs[0]["batch"].split("-")[0], rs[-1]["batch"].split("-")[-1]
    opening = (f"On H100s, a cross-device check on {len(rs)} held-out walks (batches "
               f"{first}–{last}), each with a profile of an H100, that mean came within 10% on "
               f"{t(rs, 'mean', 10)}")
    assert opening in readme, f"the README's opening should say:\n{opening}"
