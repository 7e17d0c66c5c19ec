use super::*;

fn point(load_gb_s: f64, stretch: f64) -> BesidePoint {
    BesidePoint {
        load_gb_s,
        stretch,
        gemm_us: 4.0,
    }
}

/// Costs with small points of +20% at 500 and 1500 GB/s and +160% at 2500, and `small_pair`.
fn with_small_points(small_pair: SmallPoint) -> BesideCosts {
    let small = |load_gb_s, stretch| SmallPoint { load_gb_s, stretch };
    BesideCosts {
        points: [point(1000.0, 0.2); 3],
        bandwidth_gb_s: 0.0,
        small: [small(500.0, 0.2), small(1500.0, 0.2), small(2500.0, 1.6)],
        small_pair,
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    }
}

/// The small stretch beside one kernel of load `gb_s`.
fn beside_one(c: &BesideCosts, gb_s: f64) -> f64 {
    c.small_stretch(std::iter::once(gb_s), None)
}

#[test]
fn small_kernels_stretch_by_the_others_load_and_older_profiles_price_none() {
    let c = with_small_points(SmallPoint::default());
    assert_eq!(beside_one(&c, 0.0), 0.0);
    assert_eq!(beside_one(&c, f64::NAN), 0.0);
    assert!((beside_one(&c, 250.0) - 0.1).abs() < 1e-12);
    assert!((beside_one(&c, 1000.0) - 0.2).abs() < 1e-12);
    assert!((beside_one(&c, 2000.0) - 0.9).abs() < 1e-12);
    assert!((beside_one(&c, 5000.0) - 1.6).abs() < 1e-12);
    // Nothing beside it: no stretch.
    assert_eq!(c.small_stretch(std::iter::empty(), None), 0.0);
    // A profile written before small kernels were measured reads as none measured.
    let p = serde_json::json!({"load_gb_s": 1000.0, "stretch": 0.2, "gemm_us": 4.0});
    let old: BesideCosts = serde_json::from_value(serde_json::json!({
        "points": [p, p, p],
        "bandwidth_gb_s": 4000.0,
    }))
    .unwrap();
    assert_eq!(old.small, [SmallPoint::default(); 3]);
    assert_eq!(old.small_pair, SmallPoint::default());
    assert_eq!(beside_one(&old, 3000.0), 0.0);
}

#[test]
fn what_kernels_beside_a_small_kernel_cost_it_adds_up() {
    let c = with_small_points(SmallPoint::default());
    // Two lanes at 1000 GB/s cost it what each does, together; not the curve at 2000.
    let two = c.small_stretch([1000.0, 1000.0].into_iter(), None);
    assert!((two - 0.4).abs() < 1e-12, "{two}");
    assert!((c.small_stretch([1000.0, 2000.0, 0.0].into_iter(), None) - 1.1).abs() < 1e-12);
}

#[test]
fn small_kernels_beside_small_kernels_are_the_least_stretch_beside_any_kernel() {
    let c = with_small_points(SmallPoint {
        load_gb_s: 100.0,
        stretch: 0.15,
    });
    // Beside kernels of little or no known load, what small kernels cost each other.
    assert!((beside_one(&c, 0.0) - 0.15).abs() < 1e-12);
    assert!((beside_one(&c, f64::NAN) - 0.15).abs() < 1e-12);
    assert!((beside_one(&c, 50.0) - 0.15).abs() < 1e-12);
    assert!((beside_one(&c, 100.0) - 0.15).abs() < 1e-12);
    // A floor, not a part of the sum: three small neighbours (40 GB/s each, 0.016 each
    // through the GEMM-load points) cost it no more than one.
    assert!((c.small_stretch([40.0, 40.0, 40.0].into_iter(), None) - 0.15).abs() < 1e-12);
    // Above it, the GEMM-load points from (0, 0).
    assert!((beside_one(&c, 1000.0) - 0.2).abs() < 1e-12);
    assert!((beside_one(&c, 2000.0) - 0.9).abs() < 1e-12);
    // Without the GEMM-load points, the pair's stretch holds above it.
    let pair_only = BesideCosts {
        small: Default::default(),
        ..c
    };
    assert!((beside_one(&pair_only, 3000.0) - 0.15).abs() < 1e-12);
}

#[test]
fn among_lanes_within_the_l2_the_pair_floor_is_its_time_a_node_not_its_share() {
    let pair = SmallPoint {
        load_gb_s: 150.0,
        stretch: 0.2,
    };
    let c = with_small_points(pair);
    // The pair's adds: 196 608 bytes at 150 GB/s, 1310.72 ns alone.
    let pair_ns = c.pair_node_ns();
    assert!((pair_ns - 1310.72).abs() < 1e-9, "{pair_ns}");
    // A node no longer than the pair's pays the pair's share, as beside device memory.
    assert!((c.small_stretch(std::iter::empty(), Some(pair_ns / 2.0)) - 0.2).abs() < 1e-12);
    assert!((c.small_stretch(std::iter::empty(), Some(pair_ns)) - 0.2).abs() < 1e-12);
    // Four times as long: the pair's 262 ns, a twentieth of the node.
    let long = c.small_stretch(std::iter::empty(), Some(4.0 * pair_ns));
    assert!((long - 0.05).abs() < 1e-12, "{long}");
    // Not among lanes within the L2: the share, however long the node.
    assert!((c.small_stretch(std::iter::once(0.0), None) - 0.2).abs() < 1e-12);
    // Neighbours' loads above the floor price the same either way.
    let loaded = c.small_stretch(std::iter::once(2000.0), Some(4.0 * pair_ns));
    assert!((loaded - 0.9).abs() < 1e-12, "{loaded}");
    // No pair measured: no floor and no pair node.
    let unmeasured = with_small_points(SmallPoint::default());
    assert_eq!(unmeasured.pair_node_ns(), 0.0);
    assert_eq!(unmeasured.small_stretch(std::iter::empty(), Some(1e4)), 0.0);
}

#[test]
fn stretch_is_linear_from_zero_through_the_points_and_flat_above() {
    // A point not measured (no load) is skipped.
    let c = BesideCosts {
        points: [point(1000.0, 0.2), point(3000.0, 0.6), point(0.0, 5.0)],
        bandwidth_gb_s: 0.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    };
    assert_eq!(c.stretch(0.0), 0.0);
    assert_eq!(c.stretch(f64::NAN), 0.0);
    assert!((c.stretch(500.0) - 0.1).abs() < 1e-12);
    assert!((c.stretch(1000.0) - 0.2).abs() < 1e-12);
    assert!((c.stretch(2000.0) - 0.4).abs() < 1e-12);
    assert!((c.stretch(9000.0) - 0.6).abs() < 1e-12);
    let none = point(0.0, 1.0);
    let none = BesideCosts {
        points: [none; 3],
        bandwidth_gb_s: 0.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    };
    assert_eq!(none.stretch(800.0), 0.0);
}

#[test]
fn a_one_round_kernel_holds_what_the_widest_pair_says() {
    // The last measured point: two GEMMs side by side took 1.5 times one alone, so each
    // held three quarters of the GPU.
    let c = BesideCosts {
        points: [point(1000.0, 0.2), point(3000.0, 0.5), point(0.0, 5.0)],
        bandwidth_gb_s: 0.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    };
    assert_eq!(c.one_round_hold(), Some(0.75));
    // One after the other (or worse) holds all of it, no more.
    let serial = BesideCosts {
        points: [point(1000.0, 0.2), point(2000.0, 0.5), point(3000.0, 1.4)],
        bandwidth_gb_s: 0.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    };
    assert_eq!(serial.one_round_hold(), Some(1.0));
    let none = BesideCosts {
        points: [point(0.0, 1.0); 3],
        bandwidth_gb_s: 0.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    };
    assert_eq!(none.one_round_hold(), None);
}

#[test]
fn beyond_the_bandwidth_the_memory_sharing_takes_the_measured_slowdown_over() {
    let c = BesideCosts {
        points: [point(1000.0, 0.2), point(2000.0, 0.4), point(4000.0, 0.6)],
        bandwidth_gb_s: 2500.0,
        small: Default::default(),
        small_pair: Default::default(),
        per_lane_us: 0.0,
        l2_gb_s: 0.0,
    };
    // Below the bandwidth, with kernels that fit beside each other, all of it is the
    // stretch beside.
    assert_eq!(c.memory_slowdown(2000.0), 1.0);
    assert!((c.beside_stretch(2000.0, 0.5) - 0.4).abs() < 1e-12);
    // At 4000 GB/s sharing 2500 costs 1.6x: the measured 1.6x is all of it.
    assert!((c.memory_slowdown(4000.0) - 1.6).abs() < 1e-12);
    assert!(c.beside_stretch(4000.0, 0.5).abs() < 1e-12);
    // Far beyond, never below 0.
    assert_eq!(c.beside_stretch(10_000.0, 0.5), 0.0);
    // Kernels that hold 1.2 of the GPU share its SMs at 1 / 1.2: of the 1.4x measured at
    // 2000 GB/s, 1.4 / 1.2 is left to the start.
    assert!((c.beside_stretch(2000.0, 1.2) - (1.4 / 1.2 - 1.0)).abs() < 1e-12);
    // Holding more than the stretch: nothing left.
    assert_eq!(c.beside_stretch(2000.0, 1.5), 0.0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn three_sizes_are_measured_on_the_device() {
    let e = Engine::new(0).unwrap();
    let (c, warning) = measure(&e).unwrap();
    for p in &c.points {
        assert!(
            p.load_gb_s > 0.0 && p.gemm_us > 0.0 && p.stretch >= 0.0,
            "{c:?}"
        );
    }
    assert!(c
        .points
        .windows(2)
        .all(|w| w[0].load_gb_s <= w[1].load_gb_s));
    // Small adds beside each size's GEMMs: measured, or none of them with a warning.
    let small_warned = warning
        .as_deref()
        .is_some_and(|w| w.contains("beside another stream's GEMMs not measured"));
    assert_eq!(
        small_warned,
        c.small.iter().all(|p| p.load_gb_s == 0.0),
        "{warning:?}"
    );
    // What each other lane costs a node: measured (at least 0), or 0 with a warning.
    assert!(c.per_lane_us.is_finite() && c.per_lane_us >= 0.0, "{c:?}");
    if warning.is_none() {
        assert!(
            c.small
                .iter()
                .all(|p| p.load_gb_s > 0.0 && p.stretch >= 0.0),
            "{c:?}"
        );
        assert!(c.small.windows(2).all(|w| w[0].load_gb_s <= w[1].load_gb_s));
    }
}
