use super::*;

#[test]
fn the_l2_note_counts_only_kernels_that_would_read_past_the_line() {
    use crate::trace::Op;
    let add = Op::kernel("vectorized_elementwise_kernel<4, add>", 0.0, 5000.0);
    let conv = Op::kernel("sm90_xmma_fprop_implicit_gemm", 0.0, 5000.0);
    let short = Op::kernel("sm90_xmma_fprop_implicit_gemm", 0.0, 1000.0);
    let with_inputs = Op {
        input_bytes: Some(1e6),
        ..add.clone()
    };
    let reads = |op: &Op, overlapping, ew| reads_past_the_line(op, 2000.0, overlapping, ew);
    // One stream: long kernels but element-wise ones (unless those stream too).
    assert!(reads(&conv, false, ElementWise::Spin));
    assert!(!reads(&add, false, ElementWise::Spin));
    assert!(reads(&add, false, ElementWise::Stream));
    assert!(!reads(&short, false, ElementWise::Spin));
    // Streams side by side: long kernels with recorded inputs, element-wise or not.
    assert!(!reads(&conv, true, ElementWise::Spin));
    assert!(reads(&with_inputs, true, ElementWise::Spin));
}

#[test]
fn work_keeps_the_default_stand_ins_on_walks_with_recorded_gemms() {
    use crate::trace::matmul::MatmulRole;
    use crate::trace::Op;
    use memra_engine::{Gemm, GemmType};
    let add = Op::kernel("vectorized_elementwise_kernel<4, add>", 0.0, 1500.0);
    let lanes = Walk {
        ops: vec![add.clone(); 4],
        ..Walk::default()
    };
    let gemv = Op {
        matmul: Some(MatmulRole::Call(Gemm::plain(GemmType::F16, 1024, 1, 1024))),
        ..Op::kernel("gemv", 0.0, 4000.0)
    };
    let beside = Walk {
        ops: vec![add, gemv],
        ..Walk::default()
    };
    assert_eq!(l2_choice_for(L2Resident::Work, &lanes), L2Resident::Work);
    assert_eq!(l2_choice_for(L2Resident::Work, &beside), L2Resident::Spin);
    // Other choices stand as asked.
    for asked in [L2Resident::Spin, L2Resident::Paced, L2Resident::Stream] {
        assert_eq!(l2_choice_for(asked, &beside), asked);
    }
}
