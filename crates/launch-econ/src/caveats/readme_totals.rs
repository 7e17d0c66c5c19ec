//! The validation totals are written in several places: the README's tables (the latest full
//! run's, and the held-out record, batch by batch), its opening summary, and the two warnings
//! that quote the held-out counts. The tables are counted from the raw numbers by
//! `scripts/validation_tables.py` (the scripts' tests check them); here the other places are
//! derived from the tables, so that a partial update (or a count that forgets the walks a
//! table leaves out) fails with what to write.

use std::path::Path;

use super::{concurrent_kernels, process_history};

/// The README, its whitespace runs made single spaces (its prose wraps anywhere).
fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(path).expect("README.md");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A count the README writes in words (`six walks failed to run`, `one whose graph …`).
fn number_word(w: &str) -> usize {
    const WORDS: [&str; 13] = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    WORDS
        .iter()
        .position(|&x| x == w)
        .unwrap_or_else(|| panic!("a count in words up to twelve, not {w:?}"))
}

/// The text between `from` (after it) and the next `to` in `text`.
fn between<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("the README has no {from:?}"))
        + from.len();
    let len = text[start..]
        .find(to)
        .unwrap_or_else(|| panic!("no {to:?} after {from:?}"));
    &text[start..start + len]
}

/// The leading number of `cell` (`91 (−9.4 … +6.9%; …)` → 91, `**87**: …` → 87).
fn lead(cell: &str) -> usize {
    let digits: String = cell
        .trim()
        .trim_start_matches('*')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("a count at the start of {cell:?}"))
}

/// One column of the table: walks, those not counted, walks that failed before anything was
/// timed, replays that failed, and the counts within each target.
#[derive(Debug)]
struct Column {
    walks: usize,
    not_counted: usize,
    failed_walks: usize,
    failed_replays: usize,
    replay: usize,
    saving: usize,
    summary: usize,
    /// The mean of the replay and the offline price within 5%.
    mean: usize,
}

impl Column {
    /// Walks whose graph ran the recorded walk and that ran: the offline price's and the
    /// saving's denominator.
    fn ran(&self) -> usize {
        self.walks - self.not_counted - self.failed_walks
    }

    /// Of those, the walks whose replay ran.
    fn replayed(&self) -> usize {
        self.ran() - self.failed_replays
    }
}

/// How many of a note's kind the replay cell names (`six walks failed to run`), 0 if none.
fn noted(cell: &str, kind: &str) -> usize {
    cell.split("; ")
        .skip(1)
        .find_map(|note| {
            note.trim_end_matches("%)")
                .trim_end_matches(')')
                .strip_suffix(kind)
        })
        .map_or(0, |count| number_word(count.trim()))
}

/// The held-out table's one-stream and several-stream columns.
fn table(readme: &str) -> (Column, Column) {
    const HEADER: &str = "| | target | one stream (";
    // The held-out table, not the full run's above it (which has the same columns).
    let at = readme
        .find("**Held out: ")
        .unwrap_or_else(|| panic!("the README has no held-out table"));
    let held = &readme[at..];
    let header = between(held, HEADER, "|---|");
    let row = |label: &str| cells(held, label);
    let replay = row("graph step, `replay` | within 5%");
    let saving = row("saving, `replay --eager-step-ms` | within 10%");
    let summary = row("graph step, `replay --summary` | within 10%");
    let mean = row("graph step, the mean of `replay` and `--summary` | within 5%");
    let heads: Vec<&str> = std::iter::once(header.split('|').next().unwrap())
        .chain(header.split("streams (").skip(1))
        .collect();
    let column = |i: usize| {
        let head = heads[i];
        let walks = lead(head);
        let not_counted = head
            .split_once("; ")
            .map(|(_, rest)| rest)
            .filter(|rest| rest.contains("whose graph ran another walk not counted"))
            .map_or(0, |rest| number_word(rest.split(' ').next().unwrap()));
        Column {
            walks,
            not_counted,
            failed_walks: noted(&replay[i], "walks failed to run")
                + noted(&replay[i], "walk failed to run"),
            failed_replays: noted(&replay[i], "replay failed")
                + noted(&replay[i], "replays failed"),
            replay: lead(&replay[i]),
            saving: lead(&saving[i]),
            summary: lead(&summary[i]),
            mean: lead(&mean[i]),
        }
    };
    (column(0), column(1))
}

/// `text` holds `phrase`, or the failure says which text and what it should say.
fn says(text: &str, phrase: &str, which: &str) {
    assert!(text.contains(phrase), "{which} should say:\n{phrase}");
}

/// The cells of the row labelled `label` (its first cells, up to the counts) in `table`.
fn cells(table: &str, label: &str) -> Vec<String> {
    between(table, &format!("| {label} |"), " | |")
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn the_full_runs_totals_agree_with_the_opening() {
    let readme = readme();
    let at = readme
        .find("**Latest full run: ")
        .expect("the README's full-run table");
    let full = &readme[at..];
    let header = between(full, "| | target | one stream (", "|---|");
    let one_walks = lead(header);
    let several_walks = lead(between(header, "several streams (", ")"));
    let all_walks = lead(between(header, "| all ", ":"));
    assert_eq!(one_walks + several_walks, all_walks, "{header}");
    let mut all = Vec::new();
    for label in [
        "graph step, `replay` | within 5%",
        "saving, `replay --eager-step-ms` | within 10%",
        "graph step, `replay --summary` (offline) | within 10%",
    ] {
        let row = cells(full, label);
        let (one, several, both) = (lead(&row[0]), lead(&row[1]), lead(&row[2]));
        assert_eq!(
            one + several,
            both,
            "the full run's row {label:?} does not add up"
        );
        all.push((one, both));
    }
    let opening = format!("How right the price is, on {all_walks} real walks");
    says(&readme, &opening, "the README's opening");
    let counts = format!(
        "the replayed graph step within 5% on {} ({} of the {one_walks} one-stream walks), the saving within 10% on {}, the offline price within 10% on {};",
        all[0].1, all[0].0, all[1].1, all[2].1
    );
    says(&readme, &counts, "the README's opening");
}

#[test]
fn the_held_out_totals_agree_wherever_they_are_quoted() {
    let readme = readme();
    let (one, several) = table(&readme);
    assert!(one.saving <= one.ran() && several.summary <= several.ran());

    let total = one.walks + several.walks;
    let heading = format!("**Held out: {total} walks, each on its first run**");
    says(&readme, &heading, "the README's held-out heading");
    // The groups as the list names them (`heldout` to `heldout59` and `heldout90` to ...).
    let listed = format!(
        "**{total} held out from the method** (groups `heldout` to `heldout{}; {} on one stream, {} on several)",
        between(&readme, "held out from the method** (groups `heldout` to `heldout", ";"),
        one.walks,
        several.walks
    );
    says(&readme, &listed, "the README's list of walks");
    let summary = format!(
        "on {total} walks held out from the method (written after it and run once unchanged) the replayed graph step within 5% on {} of the {} one-stream walks that ran and {} of the {} multi-stream ones, the offline price within 10% on {} of {} and {} of {}, and the mean of the two, which `replay` now prices on an H200 (and on any GPU with `--profile` of it), within 5% on {} and {}",
        one.replay,
        one.replayed(),
        several.replay,
        several.replayed(),
        one.summary,
        one.ran(),
        several.summary,
        several.ran(),
        one.mean,
        several.mean
    );
    says(&readme, &summary, "the README's opening");

    let offline = format!(
        "on {} of {} H200 walks held out from the method",
        several.summary,
        several.ran()
    );
    says(
        &concurrent_kernels(0.5, None),
        &offline,
        "the concurrency warning (caveats::concurrent_kernels)",
    );
    let replayed = format!(
        "{} of the {} multi-stream walks that ran came within 5%",
        several.replay,
        several.replayed()
    );
    let mean = format!(
        "the mean of the replay and the offline model on {}",
        several.mean
    );
    says(
        &process_history(8),
        &mean,
        "the process-history warning (caveats::process_history)",
    );
    says(
        &process_history(8),
        &replayed,
        "the process-history warning (caveats::process_history)",
    );
}

#[test]
fn the_table_reader_takes_the_counts_and_what_is_left_out() {
    let text = "x **Held out: 30 walks** | | target | one stream (10; one whose graph ran another walk not counted) | several streams (20) | |---|---|---:|---:| | graph step, `replay` | within 5% | 7 (−1 … +2%; two walks failed to run) | 15 (−3 … +4%; one replay failed) | | saving, `replay --eager-step-ms` | within 10% | 8 (−5 … +6%) | 16 (−7 … +8%) | | graph step, `replay --summary` | within 10% | 9 (−1 … +1%) | 17 (−2 … +2%) | | graph step, the mean of `replay` and `--summary` | within 5% | 8 (−1 … +1%) | 18 (−2 … +2%) | | y";
    let (one, several) = table(text);
    let counts = |c: &Column| {
        (
            c.walks,
            c.ran(),
            c.replayed(),
            c.replay,
            c.saving,
            c.summary,
            c.mean,
        )
    };
    assert_eq!(counts(&one), (10, 7, 7, 7, 8, 9, 8));
    assert_eq!(counts(&several), (20, 20, 19, 15, 16, 17, 18));
}
