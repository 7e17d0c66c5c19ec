"""The contents list of the validation log and the citations of its (and the README's) sections
elsewhere: checked on the repository itself, and the checker's reading on small documents."""
import os
import subprocess
import sys

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)

import doc_sections  # noqa: E402

LOG = os.path.join(ROOT, "docs", "validation-h200.md")


def run(*args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "doc_sections.py"), *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_the_validation_logs_contents_list_is_current():
    p = run("contents", "--check", LOG)
    assert p.returncode == 0, p.stderr


def test_every_citation_of_the_logs_and_the_readmes_sections_names_one():
    p = run("refs", LOG, os.path.join(ROOT, "README.md"), "--root", ROOT)
    assert p.returncode == 0, p.stderr


def test_anchors_drop_punctuation_and_number_repeats():
    seen = {}
    assert doc_sections.anchor("Held-out batch 46 (H200, 2026-12-04)", seen) == \
        "held-out-batch-46-h200-2026-12-04"
    assert doc_sections.anchor("Small kernels (`--summary`, offline)", seen) == \
        "small-kernels---summary-offline"
    assert doc_sections.anchor("Two levels", seen) == "two-levels"
    assert doc_sections.anchor("Two levels", seen) == "two-levels-1"


def test_contents_are_put_before_the_first_section_then_rewritten_in_place():
    text = "# Log\n\nIntro.\n\n## Newest (H200)\n\nA.\n\n```\n## not a heading\n```\n\n## Older\n"
    once = doc_sections.with_contents(text)
    assert "- [Newest (H200)](#newest-h200)\n- [Older](#older)\n<!-- /contents -->" in once
    assert "not-a-heading" not in once
    assert once.index("<!-- contents -->") < once.index("## Newest")
    assert doc_sections.with_contents(once) == once
    grown = once.replace("## Newest (H200)", "## Newer\n\nB.\n\n## Newest (H200)", 1)
    again = doc_sections.with_contents(grown)
    assert again.count("<!-- contents -->") == 1
    assert "- [Newer](#newer)\n- [Newest (H200)](#newest-h200)" in again


def test_a_stale_contents_list_fails_the_check(tmp_path):
    doc = tmp_path / "log.md"
    doc.write_text(doc_sections.with_contents("# Log\n\n## One\n") + "\n## Two\n")
    p = run("contents", "--check", str(doc))
    assert p.returncode == 1 and "stale" in p.stderr
    assert run("contents", str(doc)).returncode == 0
    assert run("contents", "--check", str(doc)).returncode == 0


def test_citations_name_a_heading_or_a_run_in_title_in_part_or_with_words_left_out():
    log = ["# Log", "## Decode attention's reads paced deep, and 27 walks held out (H200)",
           "**Where `--summary` is off, by the widest GEMM.** Text.",
           "   **Concurrent walks the replay was not developed on**", "## Two levels"]
    # The log's name is put together so that these citations, some stale on purpose, are not
    # citations in this file for the repository-wide check above.
    log_name = "docs/validation" + "-h200.md"
    files = [
        ("a.rs", f'//! ({log_name}, "Decode attention\'s reads paced\n'
                 '//! deep, and 27 walks held out")'),
        ("b.py", 'see section "Where --summary is off" and validation doc, "Two levels"'),
        ("c.md", f'{log_name}, "Decode attention\'s … held out (H200)"'),
        ("d.md", f'{log_name}, "Concurrent walks the replay"'),
        ("e.md", f'{log_name}, "Eleven more walks held out"'),
        ("f.md", f'{log_name}, "Two levels … paced deep"'),
        ("g.md", 'README, "Two levels"'),
    ]
    stale = doc_sections.stale_citations("docs/validation-h200.md", log, files)
    assert stale == [("e.md", "Eleven more walks held out"), ("f.md", "Two levels … paced deep")]


def test_a_document_without_a_known_citation_form_is_refused(tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("## One\n")
    p = run("refs", str(doc), "--root", ROOT)
    assert p.returncode == 1 and "no known way of citing notes.md" in p.stderr
