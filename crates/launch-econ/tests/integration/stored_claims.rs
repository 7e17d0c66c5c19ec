//! What the price says of its own accuracy "with this version" is what this version gives on
//! the stored validation walks (`docs/stored`: every walk's eager trace and the real steps its
//! run measured on the H200). Each walk is priced offline here, as `replay --summary` prices
//! it, and the figures the warnings, the eager step's note and the README quote (its totals
//! and the walks it names where the price is off) are formed from the results: a change to
//! the model that moves them fails here, with the sentence to put in their place, instead of
//! leaving a stale claim.

use std::path::{Path, PathBuf};

use launch_econ::caveats::unreproduced;
use launch_econ::pricing::{load_profile, price_offline, read_walk};
use launch_econ::trace::{Filter, Walk};
use launch_econ::trace_eager::{ClassAccuracy, BY_LAUNCH_CALLS};
use launch_econ::wide_grids::WideGrids;
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One stored walk: its record and its eager trace.
struct Stored {
    record: Value,
    trace: PathBuf,
}

/// Every stored walk whose eager trace is kept, in a fixed order.
fn stored() -> Vec<Stored> {
    let mut found = Vec::new();
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root().join("docs/stored"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    for run in runs {
        let mut groups: Vec<PathBuf> = std::fs::read_dir(&run)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|g| g.join("validation.json").is_file())
            .collect();
        groups.sort();
        for group in groups {
            let text = std::fs::read_to_string(group.join("validation.json")).unwrap();
            let records: Vec<Value> = serde_json::from_str(&text).unwrap();
            for record in records {
                let (Some(trace), Some(_)) = (
                    record["eager_trace"].as_str(),
                    record["eager_step_ms"].as_f64(),
                ) else {
                    continue;
                };
                let name = Path::new(trace).file_name().unwrap().to_str().unwrap();
                let plain = group.join(name);
                let zipped = group.join(format!("{name}.gz"));
                let trace = [plain, zipped].into_iter().find(|t| t.is_file());
                if let Some(trace) = trace {
                    found.push(Stored { record, trace });
                }
            }
        }
    }
    found
}

/// What one stored walk gives: the offline graph step's error against the real graph (where
/// its graph ran the recorded walk), the trace-only eager step over the real one, how many
/// streams it ran on, and the warnings its price carries.
struct Priced {
    walk: String,
    graph_error_pct: Option<f64>,
    eager_ratio: f64,
    eager_text: String,
    launch_calls: usize,
    streams: usize,
    warnings: Vec<String>,
    /// Of a walk of several streams priced with its waits taken out: the errors of the upper
    /// bound (its graph step) and the lower bound against the real graph, %, and the text.
    unordered: Option<(f64, f64, String)>,
    /// The same with its shapes taken out as well (upper, lower), %.
    unordered_shapeless: Option<(f64, f64)>,
    /// The offline graph step's error with the trace's shapes taken out, %, where the trace
    /// had shapes and its graph ran the recorded walk.
    shapeless_error_pct: Option<f64>,
}

fn price(s: &Stored) -> Priced {
    let r = &s.record;
    let eager_ms = r["eager_step_ms"].as_f64().unwrap();
    let real_graph_ms = r["graph_step_other_stream_ms"]
        .as_f64()
        .or(r["graph_step_ms"].as_f64())
        .unwrap();
    let (read, info) = read_walk(&s.trace, &Filter::default(), 3).unwrap();
    let profile = load_profile(None).unwrap();
    let device = profile.0.device.clone().map(|d| d.name).unwrap_or_default();
    // The walk as recorded, or as `change` leaves it, priced offline with `eager` (None: from
    // the trace alone), and the walk as pricing left it (kernels given their twins' durations).
    let priced_with = |change: &dyn Fn(&mut Walk), eager: Option<f64>| {
        let mut w = read.clone();
        change(&mut w);
        let grids = WideGrids::shipped_for(&device);
        let p = price_offline(&mut w, info.clone(), profile.clone(), eager, grids, false);
        (p.prediction, w)
    };
    let price_of = |change: &dyn Fn(&mut Walk), eager: Option<f64>| priced_with(change, eager).0;
    let error = |ms: f64| (ms / real_graph_ms - 1.0) * 100.0;
    let no_waits = |w: &mut Walk| w.waits.clear();
    let no_shapes = |w: &mut Walk| {
        for o in &mut w.ops {
            o.matmul = None;
            o.input_bytes = None;
            o.largest_input_bytes = None;
            o.gathered_bytes = None;
        }
    };
    let (graph, walk) = priced_with(&|_| {}, Some(eager_ms));
    let trace_only = price_of(&|_| {}, None);
    let unordered = price_of(&no_waits, Some(eager_ms));
    let unordered = unordered.graph_step_independent_ms.map(|lower| {
        (
            error(unordered.graph_step_ms),
            error(lower),
            unordered.text(),
        )
    });
    let bare = price_of(&|w| (no_waits(w), no_shapes(w)).1, Some(eager_ms));
    let unordered_shapeless = bare
        .graph_step_independent_ms
        .map(|lower| (error(bare.graph_step_ms), error(lower)));
    let had_shapes = launch_econ::footprint::has_shapes(&read);
    let shapeless = price_of(&no_shapes, Some(eager_ms)).graph_step_ms;
    Priced {
        walk: r["walk"].as_str().unwrap_or_default().to_string(),
        graph_error_pct: (r["same_walk"].as_bool() != Some(false))
            .then(|| error(graph.graph_step_ms)),
        eager_ratio: trace_only.eager_step_ms / eager_ms,
        eager_text: trace_only.text(),
        launch_calls: walk.host.map_or(0, |h| h.launch_calls),
        streams: r["walk_summary"]["streams"].as_array().map_or(1, Vec::len),
        warnings: unreproduced(&walk, false),
        unordered: unordered.filter(|_| r["same_walk"].as_bool() != Some(false)),
        unordered_shapeless: unordered_shapeless
            .filter(|_| r["same_walk"].as_bool() != Some(false)),
        shapeless_error_pct: (had_shapes && r["same_walk"].as_bool() != Some(false))
            .then(|| error(shapeless)),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn range(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

fn within(v: &[f64], pct: f64) -> usize {
    v.iter().filter(|e| e.abs() <= pct).count()
}

/// A signed percentage as the README writes it: one decimal, a true minus.
fn signed(x: f64) -> String {
    format!("{x:+.1}").replace('-', "−")
}

/// A percentage to the whole, as the README writes a walk's figure in a range: a true minus.
fn whole(x: f64) -> String {
    format!("{x:.0}").replace('-', "−")
}

/// The offline graph step's error of the one stored walk named `walk`, %.
fn error_of(priced: &[Priced], walk: &str) -> f64 {
    let found: Vec<f64> = priced
        .iter()
        .filter(|p| p.walk == walk)
        .filter_map(|p| p.graph_error_pct)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "stored runs of {walk} priced against their graph"
    );
    found[0]
}

/// The errors of `walks` to the whole, the nearest zero and the farthest, as the README gives
/// a kind's spread: `−12 … −15`.
fn spread(priced: &[Priced], walks: &[&str]) -> String {
    let mut errors: Vec<f64> = walks.iter().map(|w| error_of(priced, w)).collect();
    errors.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    format!("{} … {}", whole(errors[0]), whole(errors[errors.len() - 1]))
}

/// The README with every run of whitespace one space, as its claims are matched: a phrase
/// may wrap anywhere.
fn readme_words() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    readme.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The claims checked so far that their texts no longer make: all of them are reported at
/// once, since pricing the stored walks again for each would take minutes.
#[derive(Default)]
struct Claims(Vec<String>);

impl Claims {
    /// `text` holds `phrase`, or the failure will say where and what to write instead.
    fn says(&mut self, text: &str, phrase: &str, where_: &str) {
        if !text.contains(phrase) {
            self.0.push(format!(
                "{where_} no longer says what this version gives on the stored walks; it should say:\n{phrase}"
            ));
        }
    }

    fn hold(self) {
        assert!(self.0.is_empty(), "{}", self.0.join("\n\n"));
    }
}

#[test]
fn accuracy_claims_of_this_version_are_what_it_gives_on_the_stored_walks() {
    let mut claims = Claims::default();
    let readme = readme_words();
    let walks = stored();
    assert!(
        walks.len() > 200,
        "stored walks went missing: {}",
        walks.len()
    );
    let priced: Vec<Priced> = std::thread::scope(|s| {
        let chunks: Vec<_> = walks
            .chunks(walks.len().div_ceil(4))
            .map(|c| s.spawn(move || c.iter().map(price).collect::<Vec<_>>()))
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });

    // Several streams: the concurrency warning every such walk's price carries.
    let several: Vec<f64> = priced
        .iter()
        .filter(|p| p.streams > 1)
        .filter_map(|p| p.graph_error_pct)
        .collect();
    let concurrency = priced
        .iter()
        .filter(|p| p.streams > 1)
        .flat_map(|p| &p.warnings)
        .find(|w| w.contains("stored multi-stream walk runs priced with this version"))
        .expect("a multi-stream walk's concurrency warning");
    claims.says(
        concurrency,
        &format!(
            "on {} of the {} stored multi-stream walk runs priced with this version",
            within(&several, 10.0),
            several.len()
        ),
        "the concurrency warning (caveats::concurrent_kernels)",
    );

    // Several streams with their waits taken out: how near each bound came.
    let unordered: Vec<&(f64, f64, String)> = priced
        .iter()
        .filter(|p| p.streams > 1)
        .filter_map(|p| p.unordered.as_ref())
        .collect();
    let upper: Vec<f64> = unordered.iter().map(|u| u.0).collect();
    let lower: Vec<f64> = unordered.iter().map(|u| u.1).collect();
    let bare: Vec<(f64, f64)> = priced
        .iter()
        .filter(|p| p.streams > 1)
        .filter_map(|p| p.unordered_shapeless)
        .collect();
    let bare_upper: Vec<f64> = bare.iter().map(|b| b.0).collect();
    let bare_lower: Vec<f64> = bare.iter().map(|b| b.1).collect();
    assert_eq!(
        bare.len(),
        unordered.len(),
        "every such walk priced both ways"
    );
    claims.says(
        &unordered.first().expect("a walk priced without its waits").2,
        &format!(
            "the {} stored H200 multi-stream walks priced with their waits taken out came within 10% of their real graphs on {} by the lower bound, on {} by the upper (with their shapes taken out as well, as an nsys CSV records them: on {} and {})",
            unordered.len(),
            within(&lower, 10.0),
            within(&upper, 10.0),
            within(&bare_lower, 10.0),
            within(&bare_upper, 10.0)
        ),
        "the bounds of a walk without recorded waits (price::UNORDERED_ACCURACY)",
    );
    claims.says(
        &readme,
        &format!(
            "the {} stored multi-stream walks came within 10% of their real graphs on {} by the lower bound and on {} by the upper one, with their shapes taken out as well (an nsys CSV records neither) on {} and {}",
            unordered.len(),
            within(&lower, 10.0),
            within(&upper, 10.0),
            within(&bare_lower, 10.0),
            within(&bare_upper, 10.0)
        ),
        "the README (\"Several streams\", without recorded waits)",
    );

    // With the traces' shapes taken out: the warning for several streams, the README for both.
    let shapeless = |several: bool| -> Vec<f64> {
        priced
            .iter()
            .filter(|p| (p.streams > 1) == several)
            .filter_map(|p| p.shapeless_error_pct)
            .collect()
    };
    let (shapeless_several, shapeless_one) = (shapeless(true), shapeless(false));
    let with_shapes: Vec<f64> = priced
        .iter()
        .filter(|p| p.streams > 1 && p.shapeless_error_pct.is_some())
        .filter_map(|p| p.graph_error_pct)
        .collect();
    let (lo, hi) = range(&shapeless_several);
    let no_shapes = format!(
        "the {} stored H200 multi-stream walks priced with their shapes taken out came within 10% of their real graphs on {} ({lo:+.1}% to {hi:+.1}%), against {} with them",
        shapeless_several.len(),
        within(&shapeless_several, 10.0),
        within(&with_shapes, 10.0)
    );
    let mut bare = Walk {
        ops: vec![
            launch_econ::trace::Op {
                stream: Some(7),
                correlation: Some(1),
                ..launch_econ::trace::Op::kernel("a", 0.0, 1.0)
            },
            launch_econ::trace::Op {
                stream: Some(8),
                correlation: Some(2),
                ..launch_econ::trace::Op::kernel("b", 0.0, 1.0)
            },
        ],
        ..Walk::default()
    };
    bare.wait_rule = launch_econ::trace::WaitRule::None;
    claims.says(
        &unreproduced(&bare, false).join("\n"),
        &no_shapes,
        "the warning for several streams without shapes (caveats::no_shapes_beside_streams)",
    );
    claims.says(
        &readme,
        &format!(
            "`--summary` on the stored walks with their shapes taken out: one stream {} of {} within 5% ({} within 10%), several streams {} of {} within 10% ({} with shapes)",
            within(&shapeless_one, 5.0),
            shapeless_one.len(),
            within(&shapeless_one, 10.0),
            within(&shapeless_several, 10.0),
            shapeless_several.len(),
            within(&with_shapes, 10.0)
        ),
        "the README (\"What to expect\", no shapes)",
    );

    // One stream of f32 FMA GEMMs beside other streams' kernels: that warning's spread.
    const FMA: &str = "one stream runs f32 GEMM kernels on the FMA units";
    let fma: Vec<f64> = priced
        .iter()
        .filter(|p| p.warnings.iter().any(|w| w.contains(FMA)))
        .filter_map(|p| p.graph_error_pct)
        .collect();
    let fma_warning = priced
        .iter()
        .flat_map(|p| &p.warnings)
        .find(|w| w.contains(FMA))
        .expect("a stored walk with one stream of f32 FMA GEMMs");
    let (lo, hi) = range(&fma);
    let fma_phrase = if fma.len() == 1 {
        format!("the one stored validation walk of the kind came {lo:+.1}% with this version")
    } else {
        format!(
            "the {} stored validation walks of the kind came {lo:+.1}% to {hi:+.1}% with this version ({} within 10%)",
            fma.len(),
            within(&fma, 10.0)
        )
    };
    claims.says(
        fma_warning,
        &fma_phrase,
        "the f32 FMA GEMM warning (caveats::simt_gemms_warning)",
    );

    // The eager step from the trace alone, over every stored walk.
    let ratios: Vec<f64> = priced.iter().map(|p| p.eager_ratio).collect();
    let eager_errors: Vec<f64> = ratios.iter().map(|r| (r - 1.0) * 100.0).collect();
    let (lo, hi) = range(&ratios);
    let eager_phrase = format!(
        "off by {lo:.2}-{hi:.1}x ({} stored H200 validation walks priced again: a median {:.2}x, {} within 25%",
        ratios.len(),
        median(&ratios),
        within(&eager_errors, 25.0)
    );
    let eager_text = priced
        .iter()
        .map(|p| &p.eager_text)
        .find(|t| t.contains("stored H200 validation walks priced again"))
        .expect("a trace-only eager step's note");
    claims.says(
        eager_text,
        &eager_phrase,
        "the trace-only eager step's note (price::EagerSource)",
    );

    // The same by the launch calls of the traces, as the note quotes it for a trace's class.
    let classes: Vec<ClassAccuracy> = BY_LAUNCH_CALLS
        .iter()
        .map(|c| {
            let errors: Vec<f64> = priced
                .iter()
                .filter(|p| c.holds(p.launch_calls))
                .map(|p| (p.eager_ratio - 1.0) * 100.0)
                .collect();
            ClassAccuracy {
                walks: errors.len(),
                within_25: within(&errors, 25.0),
                median_abs_error_pct: median(&errors.iter().map(|e| e.abs()).collect::<Vec<_>>())
                    .round() as usize,
                ..*c
            }
        })
        .collect();
    assert_eq!(
        classes,
        BY_LAUNCH_CALLS,
        "trace_eager::BY_LAUNCH_CALLS no longer says what this version gives on the stored walks; it should say:\n{classes:#?}"
    );

    let words: Vec<String> = classes.iter().map(ClassAccuracy::range).collect();
    let readme_classes = format!(
        "traces of {} launch calls {} of {} within 25% (a median error of {}%), {} {} of {} ({}%), {} {} of {} ({}%)",
        words[0],
        classes[0].within_25,
        classes[0].walks,
        classes[0].median_abs_error_pct,
        words[1],
        classes[1].within_25,
        classes[1].walks,
        classes[1].median_abs_error_pct,
        words[2],
        classes[2].within_25,
        classes[2].walks,
        classes[2].median_abs_error_pct
    );

    // The README's account of this version's offline price.
    let one: Vec<f64> = priced
        .iter()
        .filter(|p| p.streams == 1)
        .filter_map(|p| p.graph_error_pct)
        .collect();
    let (one_lo, one_hi) = range(&one);
    let (sev_lo, sev_hi) = range(&several);
    claims.says(
        &readme,
        &format!(
            "one stream {} of {} within 5% ({} … {}%, median {}%); several streams {} of {} within 10%, {} within 5% ({} … {}%, median {}%)",
            within(&one, 5.0),
            one.len(),
            signed(one_lo),
            signed(one_hi),
            signed(median(&one)),
            within(&several, 10.0),
            several.len(),
            within(&several, 5.0),
            signed(sev_lo),
            signed(sev_hi),
            signed(median(&several))
        ),
        "the README (\"This version's offline price\")",
    );
    claims.says(
        &readme,
        &format!(
            "the {} stored walks come {lo:.2}–{hi:.1}× their unprofiled step, a median {:.2}×, {} within 25%",
            ratios.len(),
            median(&ratios),
            within(&eager_errors, 25.0)
        ),
        "the README (\"Pass --eager-step-ms\")",
    );
    claims.says(
        &readme,
        &readme_classes,
        "the README (\"Pass --eager-step-ms\", by launch calls)",
    );

    // The README's walks where `--summary` is off (or was, and what it gives now).
    let now = |walk: &str| signed(error_of(&priced, walk));
    for phrase in [
        format!(
            "LayerNorm lanes beside such a GEMV −12.3 → {}% since",
            now("iz_layernorm_lanes_beside_wide_gemv")
        ),
        format!(
            "brought an adapter lane beside its base projection to {}%",
            now("ie_projection_with_adapter_lanes")
        ),
        format!(
            "rank-16 adapters beside their base to {}%",
            spread(
                &priced,
                &[
                    "ik_lora_adapters_beside_base",
                    "lora_beside_base",
                    "kf_lora_adapters_beside_base_b8"
                ]
            )
        ),
        format!(
            "column sums beside two GEMV lanes {}%",
            now("kd_column_sums_beside_two_gemv_lanes")
        ),
        format!(
            "LayerNorm-GELU lanes beside attention or GEMMs {}%",
            spread(
                &priced,
                &[
                    "iv_four_layernorm_gelu_lanes_b16",
                    "iw_layernorm_gelu_lanes_beside_attention_b4"
                ]
            )
        ),
        format!(
            "embedding bags beside an f32 MLP {}%",
            whole(error_of(&priced, "ie_embedding_bags_beside_mlp"))
        ),
        format!(
            "softmax passes beside projection lanes {}%",
            now("iv_softmax_beside_projection_lanes")
        ),
        format!(
            "not at what each would ask alone: {}% since",
            now("iz_adds_beside_narrow_gemv_lanes")
        ),
    ] {
        claims.says(
            &readme,
            &phrase,
            "the README (\"Where the prices are off\", several streams, `--summary`)",
        );
    }
    claims.hold();
}

/// The README's figure for lanes within the L2 priced with an instance's own L2 figure is what
/// this version gives on the stored H100 run it names (`docs/cross-device`): batch 94's four
/// lanes of f32 clamps and square roots, priced with that run's profile.
#[test]
fn the_l2_lanes_figure_is_what_this_version_gives_on_the_stored_h100_run() {
    let run = root().join("docs/cross-device/h100-heldout-94-751a07a");
    let group = run.join("heldout94");
    let walk = "lt_four_lanes_of_clamp_sqrt_f32_512k";
    let text = std::fs::read_to_string(group.join("validation.json")).unwrap();
    let records: Vec<Value> = serde_json::from_str(&text).unwrap();
    let r = records.iter().find(|r| r["walk"] == walk).unwrap();
    let real_graph_ms = r["graph_step_other_stream_ms"]
        .as_f64()
        .or(r["graph_step_ms"].as_f64())
        .unwrap();
    let trace = group.join(format!("{walk}.eager.json.gz"));
    let (mut w, info) = read_walk(&trace, &Filter::default(), 3).unwrap();
    let profile = load_profile(Some(&run.join("profile-h100.json"))).unwrap();
    let device = profile.0.device.clone().map(|d| d.name).unwrap_or_default();
    let grids = WideGrids::shipped_for(&device);
    let eager_ms = r["eager_step_ms"].as_f64();
    let p = price_offline(&mut w, info, profile, eager_ms, grids, false).prediction;
    let error = (p.graph_step_ms / real_graph_ms - 1.0) * 100.0;
    let flat = readme_words();
    let mut claims = Claims::default();
    claims.says(
        &flat,
        &format!("took the four f32 lanes from −29.1% to {}", signed(error)),
        "README (lanes within the L2)",
    );
    claims.hold();
}
