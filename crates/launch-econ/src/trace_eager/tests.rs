use super::*;
use crate::offline::tests::walk;

#[test]
fn trace_estimate_removes_launch_inflation_and_keeps_gpu_time() {
    // Ops end at 0.5 + 5 + 4 = 9.5 µs; host starts 10 µs earlier; 2 launches of 8 µs
    // against a 3 µs floor: 10 µs of inflation.
    let h = HostSide {
        start_ns: -10_000.0,
        launch_calls: 2,
        launch_call_ns: 16_000.0,
        cpu_ops: 2,
        profiler_overhead_ns: 0.0,
        runtime_calls: 2,
        profiler_per_event_ns: 0.0,
        profiler_per_event_samples: 0,
        profiler_between_ops_ns: 0.0,
        profiler_between_ops_samples: 0,
        profiler_inside_op_ns: 0.0,
        profiler_inside_op_samples: 0,
        profiler_inside_call_ns: 0.0,
        issue_interval_ns: 0.0,
        issue_interval_samples: 0,
        first_call_excess_ns: 0.0,
        blocking_waits_mid_step: 0,
    };
    // The eager step of the two ops' walk with host side `h`, ms.
    let eager = |h: HostSide| eager_from_trace(&walk(&[500.0, 4000.0], Some(h)), 3.0).unwrap();
    let e = eager(h);
    assert!((e - 0.0095).abs() < 1e-12, "{e}");
    // Each of the 4 recorded events cost the profiler 1 µs outside it.
    let callbacks = HostSide {
        start_ns: -20_000.0,
        profiler_per_event_ns: 1_000.0,
        ..h
    };
    let e = eager(callbacks);
    assert!((e - 0.0155).abs() < 1e-12, "{e}");
    // No operator that only calls operators: the gaps between operators, 1.5 µs, stand in
    // for the cost outside each event; where such operators are read (1 µs), not.
    let gaps = HostSide {
        start_ns: -20_000.0,
        profiler_between_ops_ns: 1_500.0,
        profiler_between_ops_samples: 3,
        ..h
    };
    let e = eager(gaps);
    assert!((e - 0.0135).abs() < 1e-12, "{e}");
    let both = HostSide {
        profiler_per_event_ns: 1_000.0,
        profiler_per_event_samples: 2,
        ..gaps
    };
    let e = eager(both);
    assert!((e - 0.0155).abs() < 1e-12, "{e}");
    // Inside each of the 2 operators 1.5 µs, inside each of the 3 calls that issue no GPU
    // work 0.5 µs (the 2 launches' part is in their inflation): 4.5 µs.
    let inside = HostSide {
        start_ns: -20_000.0,
        runtime_calls: 5,
        profiler_inside_op_ns: 1_500.0,
        profiler_inside_call_ns: 500.0,
        ..h
    };
    let e = eager(inside);
    assert!((e - 0.015).abs() < 1e-12, "{e}");
    // First calls that ran 3 µs beyond the same calls later: paid once, not every step.
    let first = HostSide {
        start_ns: -20_000.0,
        first_call_excess_ns: 3_000.0,
        ..h
    };
    let e = eager(first);
    assert!((e - 0.0165).abs() < 1e-12, "{e}");
    // The profiler's own 2 µs of buffer work inside the step is not the step's.
    let busy = HostSide {
        start_ns: -20_000.0,
        profiler_overhead_ns: 2_000.0,
        ..h
    };
    let e = eager(busy);
    assert!((e - 0.0175).abs() < 1e-12, "{e}");
    // However much the profiler claims, never below the recorded GPU time (4.5 µs, where
    // 2 launches at a 1 µs floor take 2)...
    let all = HostSide {
        profiler_overhead_ns: 1e9,
        ..h
    };
    let e = eager_from_trace(&walk(&[500.0, 4000.0], Some(all)), 1.0).unwrap();
    assert!((e - 0.0045).abs() < 1e-12, "{e}");
    // ...counted once where ops of two streams overlapped: the 0.5 µs op inside the 4 µs
    // one leaves 4 µs busy.
    let mut beside = walk(&[500.0, 4000.0], Some(all));
    for (o, (s, start)) in beside.ops.iter_mut().zip([(7, 1000.0), (8, 0.0)]) {
        o.stream = Some(s);
        o.start_ns = start;
    }
    let e = eager_from_trace(&beside, 1.0).unwrap();
    assert!((e - 0.004).abs() < 1e-12, "{e}");
    // ...nor below issuing every launch at the floor: 2 launches at 3 µs, 6 µs; 4, 12 µs.
    let e = eager(all);
    assert!((e - 0.006).abs() < 1e-12, "{e}");
    let four = HostSide {
        launch_calls: 4,
        ..all
    };
    let e = eager_from_trace(&walk(&[500.0, 4000.0], Some(four)), 3.0).unwrap();
    assert!((e - 0.012).abs() < 1e-12, "{e}");
    assert!(eager_from_trace(&walk(&[1.0], None), 3.0).is_none());
}

#[test]
fn a_trace_without_operators_is_no_longer_than_its_launch_calls_at_their_cadence() {
    // 4 launch calls of 2 µs at a 2 µs floor (no inflation) over a 100 µs span; the GPU
    // busy 4.5 µs; no operator, so no cost per event read.
    let h = HostSide {
        start_ns: -90_500.0,
        launch_calls: 4,
        launch_call_ns: 8_000.0,
        runtime_calls: 4,
        issue_interval_ns: 5_000.0,
        issue_interval_samples: 3,
        ..HostSide::default()
    };
    let eager = |h: HostSide| eager_from_trace(&walk(&[500.0, 4000.0], Some(h)), 2.0).unwrap();
    // 4 calls 5 µs apart: 20 µs, not the 100 µs span.
    assert_eq!(launch_cadence_ns(&h), Some(20_000.0));
    assert!((eager(h) - 0.02).abs() < 1e-12, "{}", eager(h));
    // Never above the span less what was read, nor below the GPU's busy time.
    let slow = HostSide {
        issue_interval_ns: 50_000.0,
        ..h
    };
    assert!((eager(slow) - 0.1).abs() < 1e-12, "{}", eager(slow));
    let quick = HostSide {
        issue_interval_ns: 100.0,
        ..h
    };
    assert!((eager(quick) - 0.008).abs() < 1e-12, "{}", eager(quick));
    // Operators recorded: their readings take the profiler's cost out, not the cadence.
    let with_operators = HostSide { cpu_ops: 4, ..h };
    assert_eq!(launch_cadence_ns(&with_operators), None);
    assert!((eager(with_operators) - 0.1).abs() < 1e-12);
    // Fewer than two launch calls on a thread: no interval.
    let one = HostSide {
        issue_interval_samples: 0,
        ..h
    };
    assert_eq!(launch_cadence_ns(&one), None);
    // The report says what the step was read at.
    let r = ProfilerReadings::of(&walk(&[500.0, 4000.0], Some(h))).unwrap();
    assert_eq!(r.launch_interval_us, Some(5.0));
    assert!(
        r.text()
            .contains("its 4 launch calls at 5.00 us apart, the lower tenth of the 3 intervals"),
        "{}",
        r.text()
    );
}

#[test]
fn a_trace_is_quoted_the_accuracy_of_its_launch_class() {
    assert_eq!(launch_class(0).range(), "fewer than 50");
    assert_eq!(launch_class(49).range(), "fewer than 50");
    assert_eq!(launch_class(50).range(), "50 to 199");
    assert_eq!(launch_class(199).range(), "50 to 199");
    assert_eq!(launch_class(200).range(), "200 or more");
    let last = launch_class(usize::MAX);
    assert_eq!(
        (last.launch_calls_below, last.walks),
        (None, BY_LAUNCH_CALLS[2].walks)
    );
    // The classes cover every count, one after another.
    assert_eq!(BY_LAUNCH_CALLS[0].launch_calls_from, 0);
    assert!(BY_LAUNCH_CALLS
        .windows(2)
        .all(|w| w[0].launch_calls_below == Some(w[1].launch_calls_from)));
    // Every class holds walks, and the note quotes the trace's own.
    assert!(BY_LAUNCH_CALLS
        .iter()
        .all(|c| c.walks > 0 && c.within_25 <= c.walks));
    let text = ProfilerReadings {
        launch_calls: 120,
        stored_accuracy: Some(launch_class(120)),
        ..readings(30, 12)
    }
    .text();
    let c = BY_LAUNCH_CALLS[1];
    assert!(
        text.contains(&format!(
            "walks of 50 to 199 launch calls, as this trace holds 120: {} of {} within 25%",
            c.within_25, c.walks
        )),
        "{text}"
    );
}

fn readings(per_event_samples: usize, inside_op_samples: usize) -> ProfilerReadings {
    let h = HostSide {
        cpu_ops: 40,
        profiler_per_event_ns: 2_500.0,
        profiler_per_event_samples: per_event_samples,
        profiler_inside_op_ns: 1_200.0,
        profiler_inside_op_samples: inside_op_samples,
        ..HostSide::default()
    };
    ProfilerReadings::of(&walk(&[500.0], Some(h))).unwrap()
}

#[test]
fn the_readings_say_what_they_rest_on_and_when_they_are_rough() {
    let t = readings(30, 12).text();
    assert!(
        t.contains("2.50 us outside each event, from 30 operator(s) that only call operators; 1.20 us inside each operator, from 12 view operator(s))"),
        "{t}"
    );
    let few = readings(5, 12).text();
    assert!(few.contains("from 5 operator(s)"), "{few}");
    assert!(few.contains("may be far off either way"), "{few}");
    let none = readings(0, 12).text();
    assert!(
        none.contains("not taken out, so the estimate is high by it"),
        "{none}"
    );
    assert!(none.contains("1.5-5.8 us an event"), "{none}");
    // No operator only calls operators, but 20 gaps between operators read 3.1 us.
    let gaps = ProfilerReadings::of(&walk(
        &[500.0],
        Some(HostSide {
            cpu_ops: 40,
            profiler_between_ops_ns: 3_100.0,
            profiler_between_ops_samples: 20,
            profiler_inside_op_ns: 1_200.0,
            profiler_inside_op_samples: 12,
            ..HostSide::default()
        }),
    ))
    .unwrap();
    assert_eq!(gaps.per_event_from, OutsideFrom::GapsBetweenOperators);
    assert_eq!(gaps.basis, ReadingBasis::Read);
    assert!(
        gaps.text().contains(
            "3.10 us outside each event, from the lower tenth of 20 gap(s) between operators"
        ),
        "{}",
        gaps.text()
    );
    let no_views = readings(30, 0).text();
    assert!(no_views.contains("no view operator"), "{no_views}");
    let few_views = readings(30, 3).text();
    assert!(few_views.contains("may be far off"), "{few_views}");
    let no_operators = ProfilerReadings::of(&walk(&[500.0], Some(HostSide::default()))).unwrap();
    assert!(
        no_operators
            .text()
            .contains("no framework operators recorded"),
        "{}",
        no_operators.text()
    );
    assert!(ProfilerReadings::of(&walk(&[500.0], None)).is_none());
}
