//! The prediction block on hand-made prices: sources, errors, savings and what it says.

use super::*;

#[test]
fn a_walk_with_branches_carries_the_wider_error_of_such_walks() {
    let one = StepPrice::new((0.5, GraphSource::Replay), (0.55, EagerSource::User), 1.0);
    assert!((one.graph_step_error_ms - 0.05).abs() < 1e-12);
    assert!(!one.branches);
    // 0.05 ms saved: 10% of 0.5 ms is all of it; with branches 41%, 410% of it.
    assert!(one
        .text()
        .contains("on the H200 validation walks, up to 10%"));
    let branched = one.with_branches();
    assert!(branched.branches);
    assert!((branched.graph_step_error_ms - 0.205).abs() < 1e-12);
    let text = branched.text();
    assert!(
        text.contains("on the H200 validation walks with streams side by side, up to 41% or 0.2050 ms here, is 410% of it"),
        "{text}"
    );
    let model =
        StepPrice::new((0.5, GraphSource::Model), (0.45, EagerSource::User), 1.0).with_branches();
    assert!((model.graph_step_error_ms - 0.195).abs() < 1e-12);
    let text = model.text();
    assert!(
        text.contains("with streams side by side, up to 39% or 0.1950 ms here: a graph may save up to 0.1450 ms"),
        "{text}"
    );
}

#[test]
fn a_saving_within_the_graph_steps_error_says_so() {
    // 0.1 ms saved on a 0.5 ms graph: 10% of the graph is 0.05 ms, 50% of the saving.
    let p = StepPrice::new((0.5, GraphSource::Replay), (0.6, EagerSource::User), 1.0);
    let t = p.text();
    assert!((p.graph_step_error_ms - 0.05).abs() < 1e-12);
    assert!(t.contains("a small saving"), "{t}");
    assert!(
        t.contains("up to 10% or 0.0500 ms here, is 50% of it"),
        "{t}"
    );
    // With streams side by side the offline model's error is 39%.
    let p =
        StepPrice::new((0.5, GraphSource::Model), (0.54, EagerSource::User), 1.0).with_branches();
    assert!(p.text().contains("up to 39% or 0.1950 ms"), "{}", p.text());
    // 8 ms saved on a 0.8 ms graph: nothing to flag.
    let p = StepPrice::new((0.8, GraphSource::Replay), (8.8, EagerSource::User), 1.0);
    assert!(!p.text().contains("a small saving"));
}

#[test]
fn no_saving_within_the_graph_steps_error_says_what_a_graph_may_save() {
    // A 27.96 ms graph against a 27.645 ms eager step: 0.3162 ms longer, and 10% of the
    // graph step (2.7961 ms) is more than that, so a graph may save up to 2.4799 ms.
    let p = StepPrice::new(
        (27.9612, GraphSource::Replay),
        (27.645, EagerSource::User),
        1.0,
    );
    let t = p.text();
    assert!(t.contains("no saving"), "{t}");
    assert!(
        t.contains("up to 10% or 2.7961 ms here: a graph may save up to 2.4799 ms"),
        "{t}"
    );
    // 0.5 ms longer on a 2 ms graph: beyond its 0.2 ms error, nothing more to say.
    let p = StepPrice::new((2.0, GraphSource::Replay), (1.5, EagerSource::User), 1.0);
    assert!(!p.text().contains("may save"), "{}", p.text());
}

#[test]
fn a_replay_priced_with_the_model_takes_the_mean_of_the_two() {
    let replayed = StepPrice::new((2.0, GraphSource::Replay), (5.0, EagerSource::User), 1.5)
        .with_quiet(1.8)
        .with_branches();
    let model = |ms: f64, quiet: Option<f64>| {
        let m = StepPrice::new((ms, GraphSource::Model), (5.0, EagerSource::User), 1.5);
        match quiet {
            Some(q) => m.with_quiet(q),
            None => m,
        }
    };
    let p = replayed.with_model(&model(2.4, Some(2.2)));
    assert_eq!(p.graph_source, GraphSource::Mean);
    assert!((p.graph_step_ms - 2.2).abs() < 1e-12, "{p:?}");
    assert_eq!(
        (p.graph_step_replayed_ms, p.graph_step_model_ms),
        (Some(2.0), Some(2.4))
    );
    // The saving, the break-even, the lower level and the error follow the mean.
    assert!((p.saving_ms - 2.8).abs() < 1e-12);
    assert!((p.break_even_steps.unwrap() - 1.5 / 2.8).abs() < 1e-12);
    assert!((p.graph_step_quiet_ms.unwrap() - 2.0).abs() < 1e-12);
    assert!((p.saving_quiet_ms.unwrap() - 3.0).abs() < 1e-12);
    assert!((p.graph_step_error_ms - 0.35 * 2.2).abs() < 1e-12);
    assert!(p.branches);
    let text = p.text();
    assert!(
        text.contains("the mean of the walk replayed as a graph on this GPU, 2.0000 ms, and the offline model over its profile, 2.4000 ms"),
        "{text}"
    );
    assert!(p.replay_and_model_apart().is_none(), "18% apart");
    let far = StepPrice::new((2.0, GraphSource::Replay), (5.0, EagerSource::User), 1.5)
        .with_model(&model(2.5, None));
    let share = far.replay_and_model_apart().unwrap();
    assert!((share - 0.5 / 2.25).abs() < 1e-12);
    assert!(
        far.text()
            .contains("the replay and the model differ by 22% of their mean"),
        "{}",
        far.text()
    );
    // Without the model's lower level, the replay's stays; a model price is left alone.
    let p = replayed.with_model(&model(2.4, None));
    assert_eq!(p.graph_step_quiet_ms, Some(1.8));
    let offline = model(2.0, None);
    assert_eq!(offline.with_model(&model(3.0, None)), offline);
    // The model's lower bound of a walk without recorded waits comes along, and widens the
    // error to reach it.
    let p = replayed.with_model(&model(2.4, None).with_independent(1.2));
    assert_eq!(p.graph_step_independent_ms, Some(1.2));
    assert!((p.graph_step_error_ms - 1.0).abs() < 1e-12, "{p:?}");
    // The model's step floored at its lanes' bytes from device memory says so beside the mean.
    let floored = model(2.4, None).with_streamed_floor(2.4);
    let p = replayed.with_model(&floored);
    assert_eq!(p.graph_step_streamed_floor_ms, Some(2.4));
    assert!(
        p.text()
            .contains("so the offline model's step is no shorter than their recorded bytes at device memory's bandwidth, 2.4000 ms"),
        "{}",
        p.text()
    );
    // The JSON names the source and holds both figures.
    let v = serde_json::to_value(replayed.with_model(&model(2.4, None))).unwrap();
    assert_eq!(v["graph_source"], "replay-and-model");
    assert_eq!(v["graph_step_model_ms"], 2.4);
}

#[test]
fn no_saving_has_no_break_even() {
    let p = StepPrice::new((2.0, GraphSource::Replay), (1.5, EagerSource::User), 10.0);
    assert!(p.break_even_steps.is_none());
    assert!(p.text().contains("no saving"));
    let p = StepPrice::new(
        (1.0, GraphSource::Model),
        (3.0, EagerSource::EngineFloor),
        10.0,
    );
    assert_eq!(p.break_even_steps, Some(5.0));
    assert!(p.text().contains("LOWER BOUND"));
}

#[test]
fn memory_the_trace_does_not_say_is_shown_in_the_graph_step() {
    let p = StepPrice::new((0.76, GraphSource::Replay), (4.0, EagerSource::User), 1.0);
    assert!(!p.text().contains("memory the trace does not say"));
    let json = serde_json::to_value(p).unwrap();
    assert!(json.get("graph_step_unknown_memory_ms").is_none());
    let u = p.with_unknown_memory(0.022);
    assert_eq!(u.graph_step_ms, 0.76);
    assert!(
        u.text()
            .contains("(+0.0220 ms of it for memory the trace does not say"),
        "{}",
        u.text()
    );
    assert_eq!(
        serde_json::to_value(u).unwrap()["graph_step_unknown_memory_ms"],
        0.022
    );
    // Taken off where the replay's stand-ins took the larger step: said with its sign.
    let d = p.with_unknown_memory(-0.022);
    assert!(
        d.text()
            .contains("(-0.0220 ms of it for memory the trace does not say: half the larger per-node step the stand-ins took"),
        "{}",
        d.text()
    );
}

#[test]
fn the_lower_level_is_reported_beside_the_price_not_instead() {
    let p = StepPrice::new((2.0, GraphSource::Replay), (5.0, EagerSource::User), 1.0);
    assert!(!p.text().contains("lower level"));
    let q = p.with_quiet(1.75);
    // The saving stays priced at the upper level; the lower level's is beside it.
    assert_eq!((q.graph_step_ms, q.saving_ms), (2.0, 3.0));
    assert_eq!(q.saving_quiet_ms, Some(3.25));
    assert!(
        q.text()
            .contains("3.0000 ms per step (3.2500 ms at the lower level)"),
        "{}",
        q.text()
    );
    assert!(
        q.text().contains("1.7500 ms at the lower level"),
        "{}",
        q.text()
    );
    let json = serde_json::to_value(q).unwrap();
    assert_eq!(json["graph_step_quiet_ms"], 1.75);
    // Documents written before the field existed still read.
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("graph_step_quiet_ms");
    old.as_object_mut().unwrap().remove("saving_quiet_ms");
    let back: StepPrice = serde_json::from_value(old).unwrap();
    assert_eq!(back.graph_step_quiet_ms, None);
    assert_eq!(back.saving_quiet_ms, None);
    // Where the two savings are within 5% of each other, only the priced one is printed.
    let close =
        StepPrice::new((2.0, GraphSource::Replay), (50.0, EagerSource::User), 1.0).with_quiet(1.9);
    assert!(!close.text().contains("ms per step ("), "{}", close.text());
}

#[test]
fn a_replay_below_the_models_streamed_floor_is_held_at_it_in_the_mean() {
    let replayed =
        StepPrice::new((2.0, GraphSource::Replay), (5.0, EagerSource::User), 1.5).with_quiet(1.8);
    let model = |floor: Option<f64>| {
        let m = StepPrice::new((2.4, GraphSource::Model), (5.0, EagerSource::User), 1.5)
            .with_quiet(2.4);
        match floor {
            Some(f) => m.with_streamed_floor(f),
            None => m,
        }
    };
    // The floor set the model's step: both halves of the mean are at least the floor.
    let p = replayed.with_model(&model(Some(2.4)));
    assert!((p.graph_step_ms - 2.4).abs() < 1e-12, "{p:?}");
    assert!(
        (p.graph_step_quiet_ms.unwrap() - 2.4).abs() < 1e-12,
        "{p:?}"
    );
    assert!((p.saving_ms - 2.6).abs() < 1e-12, "{p:?}");
    // The replayed figure itself is kept as measured, and the text says it was held.
    assert_eq!(p.graph_step_replayed_ms, Some(2.0));
    assert!(
        p.text()
            .contains("2.0000 ms, held at the floor of lanes past the L2, 2.4000 ms"),
        "{}",
        p.text()
    );
    // A replay above the floor, or a model without one, is averaged as it is.
    let above = StepPrice::new((2.6, GraphSource::Replay), (5.0, EagerSource::User), 1.5)
        .with_model(&model(Some(2.4)));
    assert!((above.graph_step_ms - 2.5).abs() < 1e-12, "{above:?}");
    assert!(
        !above.text().contains("held at the floor"),
        "{}",
        above.text()
    );
    let p = replayed.with_model(&model(None));
    assert!((p.graph_step_ms - 2.2).abs() < 1e-12, "{p:?}");
}
