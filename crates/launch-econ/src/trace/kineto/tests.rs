//! The Kineto reader on hand-written events: both top-level forms, the host side, matmul
//! shapes, stream waits, marked steps, and errors that say where.

use super::*;
use crate::trace::matmul::MatmulRole;
use crate::trace::StepChoice;

fn read_str(s: &str) -> Result<Walk, TraceError> {
    read(s.as_bytes(), "t.json")
}

#[test]
fn object_and_bare_array_forms() {
    let ev = r#"{"ph":"X","cat":"kernel","name":"k","ts":10.5,"dur":2.25,"args":{"device":0,"stream":7,"grid":[2,1,1],"block":[128,1,1]}}"#;
    let a = read_str(&format!(r#"{{"schemaVersion":1,"traceEvents":[{ev}]}}"#)).unwrap();
    let b = read_str(&format!("[{ev}]")).unwrap();
    assert_eq!(a, b);
    let op = &a.ops[0];
    assert_eq!((op.start_ns, op.duration_ns), (10500.0, 2250.0));
    assert_eq!((op.device, op.stream), (Some(0), Some(7)));
    assert_eq!(
        op.kind,
        OpKind::Kernel {
            grid: (2, 1, 1),
            block: (128, 1, 1)
        }
    );
}

#[test]
fn host_side_counts_issuing_calls_and_the_first_cpu_event() {
    let w = read_str(
        r#"{"traceEvents":[
        {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":100,"dur":9},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":102,"dur":4.5},
        {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","ts":110,"dur":2},
        {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","ts":120,"dur":50},
        {"ph":"X","cat":"overhead","name":"Activity Buffer Request","ts":90,"dur":14},
        {"ph":"X","cat":"overhead","name":"Activity Buffer Request","ts":103,"dur":2},
        {"ph":"X","cat":"overhead","name":"Activity Buffer Request","ts":20,"dur":30},
        {"ph":"X","cat":"kernel","name":"k","ts":104,"dur":3,"args":{"grid":[1,1,1],"block":[32,1,1]}}]}"#,
    )
    .unwrap();
    let h = w.host.unwrap();
    // The profiler's own work is counted apart and does not start the step; only what
    // lies inside the step (100..107 µs) counts, overlaps once: 100..105.
    assert_eq!(h.start_ns, 100_000.0);
    assert_eq!(h.profiler_overhead_ns, 5_000.0);
    assert_eq!((h.launch_calls, h.cpu_ops), (2, 1));
    // The launch at 102..106.5 holds 3 of that work (102..105), counted as overhead only.
    assert_eq!(h.launch_call_ns, 3_500.0);
    assert_eq!(w.end_ns(), 107_000.0);
    // A GPU-only trace has no host side.
    let g = read_str(
        r#"[{"cat":"kernel","name":"k","ts":1,"dur":2,"args":{"grid":[1,1,1],"block":[1,1,1]}}]"#,
    )
    .unwrap();
    assert!(g.host.is_none());
}

#[test]
fn kernels_of_a_matmul_with_recorded_shapes_carry_its_gemm() {
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":100,"dur":9,"args":{"External id":7,
         "Input Dims":[[8,1024],[1024,1024]],"Input type":["c10::Half","c10::Half"],
         "Input Strides":[[1024,1],[1,1024]]}},
        {"ph":"X","cat":"cpu_op","name":"aten::relu","ts":120,"dur":3,"args":{"External id":8,
         "Input Dims":[[8,1024]],"Input type":["c10::Half"]}},
        {"ph":"X","cat":"kernel","name":"splitKreduce_kernel","ts":210,"dur":1,"args":{"External id":7,"correlation":12,"stream":7,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"kernel","name":"nvjet_hsh_64x8","ts":200,"dur":4,"args":{"External id":7,"correlation":11,"stream":7,"grid":[4,4,1],"block":[384,1,1]}},
        {"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel","ts":220,"dur":1,"args":{"External id":8,"correlation":13,"stream":7,"grid":[8,1,1],"block":[128,1,1]}}
    ]"#,
    )
    .unwrap();
    let roles: Vec<_> = w.ops.iter().map(|o| o.matmul).collect();
    let Some(MatmulRole::Call(m)) = roles[0] else {
        panic!("the GEMM kernel is not the call: {roles:?}");
    };
    assert_eq!(
        (m.m, m.n, m.k, m.trans_a, m.dtype),
        (1024, 8, 1024, true, memra_engine::GemmType::F16)
    );
    assert_eq!(roles[1], Some(MatmulRole::Part));
    assert_eq!(roles[2], None);
    // Without shapes nothing is marked.
    let plain = read_str(r#"[{"ph":"X","cat":"kernel","name":"nvjet","ts":1,"dur":1,"args":{"External id":7,"grid":[1,1,1],"block":[1,1,1]}}]"#).unwrap();
    assert_eq!(plain.ops[0].matmul, None);
}

#[test]
fn a_matmuls_gemm_kernel_is_the_call_after_a_scaling_helper() {
    // cuBLAS's IEEE f32 GEMM of 32 tokens: C scaled by beta, then the GEMM, then its epilogue.
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::addmm","ts":100,"dur":9,"args":{"External id":7,
         "Input Dims":[[4096],[32,4096],[4096,4096]],"Input type":["float","float","float"],
         "Input Strides":[[1],[4096,1],[1,4096]]}},
        {"ph":"X","cat":"kernel","name":"void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasTransposeParams<float>)","ts":200,"dur":1,"args":{"External id":7,"correlation":11,"stream":7,"grid":[64,1,1],"block":[256,1,1]}},
        {"ph":"X","cat":"kernel","name":"void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>","ts":202,"dur":95,"args":{"External id":7,"correlation":12,"stream":7,"grid":[128,1,3],"block":[16,16,1]}},
        {"ph":"X","cat":"kernel","name":"void cublasLt::epilogue::impl::globalKernel<8, 32, float>","ts":298,"dur":2,"args":{"External id":7,"correlation":13,"stream":7,"grid":[512,1,1],"block":[8,32,1]}}
    ]"#,
    )
    .unwrap();
    let roles: Vec<_> = w.ops.iter().map(|o| o.matmul).collect();
    assert_eq!(roles[0], Some(MatmulRole::Part));
    assert!(
        matches!(roles[1], Some(MatmulRole::Call(g)) if (g.m, g.n, g.k) == (4096, 32, 4096)),
        "the GEMM kernel is not the call: {roles:?}"
    );
    assert_eq!(roles[2], Some(MatmulRole::Part));
}

#[test]
fn an_operators_input_bytes_go_to_its_longest_kernel() {
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::_cudnn_attention_forward","ts":100,"dur":9,"args":{"External id":7,
         "Input Dims":[[1,2,1,64],[1,2,512,64],[1,2,512,64],[]],"Input type":["c10::Half","c10::Half","c10::Half","Scalar"]}},
        {"ph":"X","cat":"cpu_op","name":"aten::cat","ts":120,"dur":3,"args":{"External id":8,
         "Input Dims":[[]],"Input type":["TensorList"]}},
        {"ph":"X","cat":"kernel","name":"flash_fprop","ts":200,"dur":9,"args":{"External id":7,"grid":[4,2,1],"block":[128,1,1]}},
        {"ph":"X","cat":"kernel","name":"lean_reduction","ts":210,"dur":1,"args":{"External id":7,"grid":[1,2,1],"block":[256,1,1]}},
        {"ph":"X","cat":"kernel","name":"cat_kernel","ts":220,"dur":1,"args":{"External id":8,"grid":[8,1,1],"block":[128,1,1]}},
        {"ph":"X","cat":"kernel","name":"k","ts":230,"dur":1,"args":{"grid":[8,1,1],"block":[128,1,1]}}
    ]"#,
    )
    .unwrap();
    let bytes: Vec<_> = w.ops.iter().map(|o| o.input_bytes).collect();
    let total = 2.0 * (2.0 * 64.0 + 2.0 * 2.0 * 512.0 * 64.0);
    assert_eq!(bytes, vec![Some(total), None, None, None]);
    // The largest input (the keys, as large as the values) goes with them.
    let largest: Vec<_> = w.ops.iter().map(|o| o.largest_input_bytes).collect();
    assert_eq!(
        largest,
        vec![Some(2.0 * 2.0 * 512.0 * 64.0), None, None, None]
    );
}

#[test]
fn an_add_of_a_transpose_carries_what_its_reads_across_the_rows_move() {
    // `y + y.T` over 512 x 512 fp16 as PyTorch 2.11 records it; an add of two contiguous
    // matrices beside it moves no more than its bytes.
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::add","ts":100,"dur":9,"args":{"External id":3,
         "Input Dims":[[512,512],[512,512],[]],"Input Strides":[[512,1],[1,512],[]],
         "Input type":["c10::Half","c10::Half","Scalar"]}},
        {"ph":"X","cat":"cpu_op","name":"aten::add","ts":120,"dur":9,"args":{"External id":4,
         "Input Dims":[[512,512],[512,512],[]],"Input Strides":[[512,1],[512,1],[]],
         "Input type":["c10::Half","c10::Half","Scalar"]}},
        {"ph":"X","cat":"kernel","name":"elementwise_kernel","ts":200,"dur":3,"args":{"External id":3,"grid":[512,1,1],"block":[128,1,1]}},
        {"ph":"X","cat":"kernel","name":"vectorized_elementwise_kernel","ts":210,"dur":1,"args":{"External id":4,"grid":[256,1,1],"block":[128,1,1]}}
    ]"#,
    )
    .unwrap();
    let excess: Vec<_> = w.ops.iter().map(|o| o.across_row_excess_bytes).collect();
    assert_eq!(excess, vec![Some(512.0 * 512.0 * 30.0), None]);
    assert_eq!(w.ops[0].input_bytes, Some(2.0 * 512.0 * 512.0 * 2.0));
}

#[test]
fn a_gather_carries_the_rows_it_read() {
    // transformers' token embedding: aten::embedding calls aten::index_select (dim 0, from
    // `Concrete Inputs`), which launches the kernel under its own `External id`.
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::embedding","ts":100,"dur":9,"args":{"External id":2,
         "Input Dims":[[8192,512],[1,1],[],[],[]],"Input type":["c10::Half","long int","Scalar","Scalar","Scalar"],
         "Concrete Inputs":["","","-1","False","False"]}},
        {"ph":"X","cat":"cpu_op","name":"aten::index_select","ts":101,"dur":7,"args":{"External id":5,
         "Input Dims":[[8192,512],[],[1]],"Input type":["c10::Half","Scalar","long int"],
         "Concrete Inputs":["","0",""]}},
        {"ph":"X","cat":"kernel","name":"indexSelectSmallIndex","ts":200,"dur":2,"args":{"External id":5,"grid":[1,1,1],"block":[128,1,1]}}
    ]"#,
    )
    .unwrap();
    let o = &w.ops[0];
    assert_eq!(
        (o.input_bytes, o.gathered_bytes),
        (Some(1024.0 + 8.0), Some(1024.0))
    );
}

#[test]
fn a_comparison_of_a_tensor_with_itself_reads_it_once() {
    // `torch.isnan(y)` runs `y != y`: aten::ne, recorded with y twice, launches the kernel
    // (every operator comes before the runtime calls, as Kineto writes them).
    let trace = |ne_ts: u32, launch_ts: u32| {
        format!(
            r#"[
        {{"ph":"X","cat":"cpu_op","name":"aten::isnan","ts":100,"dur":20,"tid":3,"args":{{"External id":2,
         "Input Dims":[[1024]],"Input type":["float"],"Input Strides":[[1]]}}}},
        {{"ph":"X","cat":"cpu_op","name":"aten::ne","ts":{ne_ts},"dur":10,"tid":3,"args":{{"External id":3,
         "Input Dims":[[1024],[1024]],"Input type":["float","float"],"Input Strides":[[1],[1]]}}}},
        {{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":{launch_ts},"dur":2,"tid":3,"args":{{"correlation":9,"External id":3}}}},
        {{"ph":"X","cat":"kernel","name":"ne_kernel","ts":200,"dur":2,"args":{{"External id":3,"correlation":9,"grid":[1,1,1],"block":[128,1,1]}}}}
    ]"#
        )
    };
    let w = read_str(&trace(101, 105)).unwrap();
    assert_eq!(w.ops[0].input_bytes, Some(4096.0));
    // Work issued between the two operators' starts could have made a second such tensor.
    let w = read_str(&trace(106, 103)).unwrap();
    assert_eq!(w.ops[0].input_bytes, Some(8192.0));
}

#[test]
fn a_self_comparison_after_work_is_a_repeat_only_where_the_outer_operator_says_so() {
    // `torch.isfinite(y)` as PyTorch records it: `abs(y)` (a kernel, a result of y's layout),
    // then `y == y`. For all the trace says, the comparison's two arguments may be y or abs(y);
    // ATen's isfinite is `(y == y) * (y.abs() != inf)`, so there both are y. The same nesting
    // under another operator counts both.
    let trace = |outer: &str| {
        format!(
            r#"[
        {{"ph":"X","cat":"cpu_op","name":"{outer}","ts":100,"dur":60,"tid":3,"args":{{"External id":2,
         "Input Dims":[[1024]],"Input type":["float"],"Input Strides":[[1]]}}}},
        {{"ph":"X","cat":"cpu_op","name":"aten::abs","ts":101,"dur":10,"tid":3,"args":{{"External id":3,
         "Input Dims":[[1024]],"Input type":["float"],"Input Strides":[[1]]}}}},
        {{"ph":"X","cat":"cpu_op","name":"aten::eq","ts":120,"dur":10,"tid":3,"args":{{"External id":4,
         "Input Dims":[[1024],[1024]],"Input type":["float","float"],"Input Strides":[[1],[1]]}}}},
        {{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":105,"dur":2,"tid":3,"args":{{"correlation":8,"External id":3}}}},
        {{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":125,"dur":2,"tid":3,"args":{{"correlation":9,"External id":4}}}},
        {{"ph":"X","cat":"kernel","name":"abs_kernel","ts":200,"dur":2,"args":{{"External id":3,"correlation":8,"grid":[1,1,1],"block":[128,1,1]}}}},
        {{"ph":"X","cat":"kernel","name":"eq_kernel","ts":210,"dur":2,"args":{{"External id":4,"correlation":9,"grid":[1,1,1],"block":[128,1,1]}}}}
    ]"#
        )
    };
    let bytes = |outer: &str, kernel: &str| {
        let w = read_str(&trace(outer)).unwrap();
        w.ops.iter().find(|o| o.name == kernel).unwrap().input_bytes
    };
    assert_eq!(bytes("aten::isfinite", "eq_kernel"), Some(4096.0));
    assert_eq!(bytes("aten::isfinite", "abs_kernel"), Some(4096.0));
    assert_eq!(bytes("my::finite_mask", "eq_kernel"), Some(8192.0));
}

#[test]
fn stream_waits_come_from_cuda_sync_events() {
    let w = read_str(
        r#"{"traceEvents":[
        {"ph":"X","cat":"kernel","name":"k","ts":5,"dur":1,"args":{"stream":13,"correlation":40,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":4,"dur":1,"args":{"stream":7,"correlation":36,"wait_on_stream":-1,"wait_on_cuda_event_id":1270}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":3,"dur":1,"args":{"stream":13,"correlation":16}},
        {"ph":"X","cat":"cuda_sync","name":"Context Sync","ts":9,"dur":1,"args":{"stream":-1,"correlation":50}}]}"#,
    )
    .unwrap();
    assert_eq!(w.ops[0].correlation, Some(40));
    assert_eq!(
        w.waits,
        vec![
            StreamWait::new(13, 16),
            StreamWait {
                recording: Some(36),
                event: Some(1270),
                ..StreamWait::new(7, 36)
            }
        ]
    );
}

#[test]
fn wait_calls_without_a_gpu_side_record_are_counted() {
    // Two runtime wait calls (16, 36) and a driver one (38); the GPU side recorded only 16.
    let w = read_str(
        r#"{"traceEvents":[
        {"ph":"X","cat":"kernel","name":"k","ts":5,"dur":1,"args":{"stream":13,"correlation":20,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","ts":1,"dur":1,"args":{"correlation":16}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":3,"dur":1,"args":{"stream":13,"correlation":16}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":2,"dur":1,"args":{"correlation":20}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","ts":6,"dur":1,"args":{"correlation":36}},
        {"ph":"X","cat":"cuda_driver","name":"cuStreamWaitEvent","ts":7,"dur":1,"args":{"correlation":38}}]}"#,
    )
    .unwrap();
    assert_eq!(w.waits.len(), 1);
    assert_eq!(w.unrecorded_waits, 2);
}

#[test]
fn waits_on_one_event_share_a_recording_until_an_event_is_recorded_again() {
    // Event 5 recorded (10), waited on by streams 13 (12) and 17 (14); some event recorded
    // (20), then 13 waits on event 5 again (22): a recording of its own, as is the wait on
    // event 60 (24) and the wait that names no event (26). The event ids do not number the
    // record calls (60 would leave event 5 without one), so which call recorded which event
    // is not read from them.
    let w = read_str(
        r#"{"traceEvents":[
        {"ph":"X","cat":"kernel","name":"k","ts":30,"dur":1,"args":{"stream":13,"correlation":28,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaEventRecordWithFlags","ts":1,"dur":1,"args":{"correlation":10}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":2,"dur":1,"args":{"stream":13,"correlation":12,"wait_on_cuda_event_id":5}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":3,"dur":1,"args":{"stream":17,"correlation":14,"wait_on_cuda_event_id":5}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","ts":4,"dur":1,"args":{"correlation":20}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":5,"dur":1,"args":{"stream":13,"correlation":22,"wait_on_cuda_event_id":5}},
        {"ph":"X","cat":"cuda_driver","name":"cuEventRecord","ts":5,"dur":1,"args":{"correlation":23}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":6,"dur":1,"args":{"stream":17,"correlation":24,"wait_on_cuda_event_id":60}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":7,"dur":1,"args":{"stream":17,"correlation":26}}]}"#,
    )
    .unwrap();
    let got: Vec<_> = w
        .waits
        .iter()
        .map(|w| (w.correlation, w.recording))
        .collect();
    assert_eq!(
        got,
        vec![
            (12, Some(12)),
            (14, Some(12)),
            (22, Some(22)),
            (24, Some(24)),
            (26, None)
        ]
    );
}

#[test]
fn marked_steps_split_ops_waits_and_host_side() {
    // Step 1 issues k1 (its launch call at 12 us, inside the host annotation) and a wait;
    // step 2's kernel has no launch call, so the GPU annotation places it.
    let w = read_str(
        r#"{"traceEvents":[
        {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":10,"dur":20},
        {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","ts":30,"dur":20},
        {"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#2","ts":55,"dur":10},
        {"ph":"X","cat":"user_annotation","name":"forward","ts":11,"dur":5},
        {"ph":"X","cat":"cpu_op","name":"aten::relu","ts":11,"dur":3},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":12,"dur":2,"args":{"correlation":5}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","ts":13,"dur":1,"args":{"correlation":6}},
        {"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","ts":40,"dur":1,"args":{"stream":8,"correlation":6}},
        {"ph":"X","cat":"cpu_op","name":"aten::relu","ts":31,"dur":3},
        {"ph":"X","cat":"kernel","name":"k1","ts":40,"dur":2,"args":{"stream":7,"correlation":5,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"kernel","name":"k2","ts":60,"dur":3,"args":{"stream":7,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"kernel","name":"k0","ts":5,"dur":1,"args":{"stream":7,"grid":[1,1,1],"block":[32,1,1]}}]}"#,
    )
    .unwrap();
    let steps: Vec<_> = w.steps.iter().map(|s| (s.number, s.ops)).collect();
    assert_eq!(steps, vec![(1, 1), (2, 1)]);
    let of = |name: &str| w.ops.iter().find(|o| o.name == name).unwrap().step;
    assert_eq!((of("k0"), of("k1"), of("k2")), (None, Some(1), Some(2)));
    assert_eq!(w.waits[0].step, Some(1));
    let one = w.clone().of_step(StepChoice::Number(1)).unwrap();
    assert_eq!(one.ops.len(), 1);
    assert_eq!(one.waits.len(), 1);
    let h = one.host.unwrap();
    assert_eq!((h.start_ns, h.launch_calls, h.cpu_ops), (11_000.0, 1, 1));
    let last = w.clone().of_step(StepChoice::Last).unwrap();
    assert_eq!((last.ops[0].name.as_str(), last.step), ("k2", Some(2)));
    assert!(last.waits.is_empty());
    assert_eq!(last.host.unwrap().cpu_ops, 1);
    // The whole trace keeps the op outside every step and the whole host side.
    let all = w.of_step(StepChoice::All).unwrap();
    assert_eq!((all.ops.len(), all.step), (3, None));
    assert_eq!(all.host.unwrap().cpu_ops, 2);
}

#[test]
fn first_calls_are_compared_with_later_calls_of_the_same_name_and_shapes() {
    // Three aten::mm of one shape (the first 30 us, then 6 and 8: 23 us once), one of another
    // shape (nothing to compare with), and a blocking copy's two calls, whose durations are
    // the GPU's (not compared).
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":0,"dur":30,"args":{"Input Dims":[[4,8],[8,8]]}},
        {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":40,"dur":6,"args":{"Input Dims":[[4,8],[8,8]]}},
        {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":50,"dur":20,"args":{"Input Dims":[[64,8],[8,8]]}},
        {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":80,"dur":8,"args":{"Input Dims":[[4,8],[8,8]]}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpy","ts":90,"dur":50},
        {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpy","ts":150,"dur":5},
        {"ph":"X","cat":"kernel","name":"k","ts":100,"dur":2,"args":{"stream":7,"grid":[1,1,1],"block":[32,1,1]}}]"#,
    )
    .unwrap();
    assert_eq!(w.host.unwrap().first_call_excess_ns, 23_000.0);
    assert!(HostKind::waits_for_gpu("cudaStreamSynchronize"));
    assert!(HostKind::waits_for_gpu("cudaMemcpy2D"));
    assert!(!HostKind::waits_for_gpu("cudaMemcpyAsync"));
    assert!(!HostKind::waits_for_gpu("cudaLaunchKernel"));
}

#[test]
fn errors_say_which_event_and_where() {
    let e = read_str(r#"{"traceEvents":[{"cat":"cpu_op","name":"x"},{"cat":"kernel","name":"k","ts":1,"dur":-2,"args":{"grid":[1,1,1],"block":[1,1,1]}}]}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("traceEvents[1]") && e.contains("negative") && e.contains("line 1"),
        "{e}"
    );
    let e = read_str(r#"{"traceEvents":[{"cat":"kernel","name":"k","ts":1,"dur":2,"args":{"grid":[1,1],"block":[1,1,1]}}]}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("array of 3 numbers"), "{e}");
    let e = read_str(r#"{"traceEvents":[{"cat":"kernel","ts":1,"dur"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("EOF"), "{e}");
    let e = read_str(r#"{"other": 1}"#).unwrap_err().to_string();
    assert!(e.contains("no traceEvents"), "{e}");
    // Correlation ids are checked like every other kept value, on ops and on waits.
    let e = read_str(r#"[{"cat":"kernel","name":"k","ts":1,"dur":2,"args":{"correlation":-1,"grid":[1,1,1],"block":[1,1,1]}}]"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("traceEvents[0]") && e.contains("args.correlation"),
        "{e}"
    );
    let e = read_str(r#"[{"cat":"cuda_sync","name":"Stream Wait Event","ts":1,"dur":1,"args":{"stream":"x","correlation":3}}]"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("args.stream"), "{e}");
}

#[test]
fn kernels_of_a_recorded_graph_launch_are_marked() {
    let w = read_str(
        r#"[{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","ts":10,"dur":5,"args":{"correlation":9}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":20,"dur":3,"args":{"correlation":10}},
        {"ph":"X","cat":"kernel","name":"g1","ts":30,"dur":1,"args":{"correlation":9,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"kernel","name":"g2","ts":31,"dur":1,"args":{"correlation":9,"grid":[1,1,1],"block":[32,1,1]}},
        {"ph":"X","cat":"kernel","name":"k","ts":40,"dur":1,"args":{"correlation":10,"grid":[1,1,1],"block":[32,1,1]}}]"#,
    )
    .unwrap();
    let graphed: Vec<_> = w
        .ops
        .iter()
        .map(|o| (o.name.as_str(), o.from_graph))
        .collect();
    assert_eq!(graphed, vec![("g1", true), ("g2", true), ("k", false)]);
    // The graph launch is an issuing call of the host side, like a kernel launch.
    assert_eq!(w.host.unwrap().launch_calls, 2);
}

#[test]
fn a_concatenation_copies_its_lists_elements_at_the_size_its_kernel_names() {
    // `torch.cat` of two 8 × 64 bf16 halves: a list the profiler records without an element
    // type; its kernel copies 2-byte opaque elements, 2 KiB in all.
    let w = read_str(
        r#"[
        {"ph":"X","cat":"cpu_op","name":"aten::cat","ts":100,"dur":9,"args":{"External id":6,
         "Input Dims":[[[8,64],[8,64]],[]],"Input type":["TensorList","Scalar"],
         "Input Strides":[[[64,1],[128,1]],[]],"Concrete Inputs":["","-1"]}},
        {"ph":"X","cat":"kernel","name":"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>","ts":200,"dur":2,"args":{"External id":6,"correlation":11,"stream":7,"grid":[264,2,1],"block":[512,1,1]}},
        {"ph":"X","cat":"cpu_op","name":"aten::cat","ts":300,"dur":9,"args":{"External id":9,
         "Input Dims":[[[8,64],[8,64]],[]],"Input type":["TensorList","Scalar"]}},
        {"ph":"X","cat":"kernel","name":"cat_without_an_element_size","ts":400,"dur":2,"args":{"External id":9,"correlation":12,"stream":7,"grid":[264,2,1],"block":[512,1,1]}}
    ]"#,
    )
    .unwrap();
    assert_eq!(w.ops[0].copied_bytes, Some(2048.0));
    // The stand-ins' inputs stay unknown: the list is not read as an operator's inputs.
    assert_eq!(w.ops[0].input_bytes, None);
    // A kernel whose name does not say its element size copies an unknown number of bytes.
    assert_eq!(w.ops[1].copied_bytes, None);
}
