//! What a recorded op asks of the device, from what its trace says: the bandwidth its bytes
//! ask (a copy's, a GEMM's operands, an element-wise kernel's inputs and result), whether it
//! reads from the L2 or waits on its loads, and its share of the SMs.

use crate::model::ModelInputs;
use crate::occupancy::SmLimits;
use crate::roofline::Roofline;
use crate::trace::matmul::{is_blas_kernel, MatmulRole};
use crate::trace::{is_attention, is_element_wise, is_normalisation, CopyDirection, Op, OpKind};

/// Whether `o`'s bytes come from the L2 where its walk's data stays there
/// ([`crate::footprint::within_l2`] of all its recorded inputs): a kernel that is not a GEMM.
/// Lanes of element-wise kernels on 1 MiB buffers slowed each other +21% and +54% (two and
/// four lanes, H100) where the stretch measured beside GEMMs streaming their weights, read at
/// their loads, priced four lanes at four times their kernels ([`crate::l2_lanes`]). A GEMM's
/// load stays device memory's: on the H200 small kernels beside GEMMs whose weights the L2
/// held ran as much longer as beside GEMMs streaming theirs.
pub(super) fn reads_from_l2(o: &Op) -> bool {
    o.is_kernel() && o.matmul.is_none() && !is_blas_kernel(&o.name)
}

/// The share of the GPU an element-wise kernel within the L2 ([`is_element_wise`]; its
/// bytes held by what it writes, [`crate::l2_lanes`]) holds beside other lanes: its blocks'
/// share ([`held_share`]) over the part of its recorded time they run, its time less the ramp
/// a profiler records beyond a kernel's blocks (`ModelInputs::spin_ramp_ns`, the profile's;
/// else the H200's [`crate::calibration::DEFAULT_SPIN_RAMP_NS`]). A kernel of a few
/// microseconds is mostly its blocks' one round, during which another lane's blocks find the
/// SMs taken: on an H100 three fp16 lanes of masks over 1 Mi (a 4.6 µs multiply by a `bool`
/// mask filling the SMs in one round, three 1.8 µs kernels of half a round) took 0.36 of the way
/// from every kernel at its recorded time to one lane after another, where holding no SMs
/// priced them at 0.09 (−30%); four bf16 lanes of `y * (y > 0)`, held out, −47.6% holding
/// none, +1.8% so. Yet a kernel's blocks do not hold the SMs for the whole of it: two lanes of
/// f16 kernels that each fill the H100 in one round (2048 blocks of 128) took 1.54 times one
/// lane, not twice, and two lanes of PyTorch's strided `elementwise_kernel` (row broadcasts,
/// every element's offsets computed), held for their whole time, came +34.8% (f32 over 1 Mi)
/// and +47.3% (bf16 over 2 Mi) where they ran 0.58 and 0.38 of the way to one after another
/// (`scripts/graph_lane_memory_probe.py --broadcast`). A kernel no longer than the ramp holds
/// none.
pub(super) fn resident_share(
    o: &Op,
    l: &SmLimits,
    m: &ModelInputs,
    roofline: Option<&Roofline>,
) -> f64 {
    if o.duration_ns <= 0.0 {
        return 0.0;
    }
    let ramp = m
        .spin_ramp_ns
        .unwrap_or(crate::calibration::DEFAULT_SPIN_RAMP_NS);
    held_share(o, l, m, roofline) * ((o.duration_ns - ramp) / o.duration_ns).clamp(0.0, 1.0)
}

/// Whether `o` is a small kernel that waits on its loads, as the profile's small adds do
/// beside another stream's GEMMs ([`crate::beside::BesideCosts::small_stretch`]): a kernel
/// that holds under half the GPU (`share`; one that fills it is held by its bandwidth, which
/// the sharing prices) and is not a fused attention or a GEMM (their blocks stream or
/// compute, and the pair stretch prices them) — but for a recorded GEMM that asks less of
/// device memory than the small adds themselves do (`small_gb_s`, the profile's small pair's
/// load; 0 where not measured): its few loads wait as theirs do. On the H200 the rank-16
/// projections of LoRA adapters (~50 GB/s) ran twice their time alone beside their base
/// lane's GEMVs in the real graph (profiled), where the GEMM pair's stretch gave +35%.
pub(super) fn waits_on_loads(o: &Op, share: f64, small_gb_s: f64) -> bool {
    let gemm = o.matmul.is_some() || is_blas_kernel(&o.name);
    let moves_little = || {
        let gb_s = gemm_gb_s(o);
        gb_s > 0.0 && gb_s < small_gb_s
    };
    o.is_kernel() && share < 0.5 && !is_attention(&o.name) && (!gemm || moves_little())
}

/// What a device-to-device copy asks of device memory, GB/s: it reads and writes its bytes
/// over its recorded time, at most `bandwidth_gb_s` (where known); 0 for other ops. Beside
/// another stream's kernels such a copy takes bandwidth as a kernel does (a weight prefetch
/// beside decode GEMMs runs nearly one after the other on the H200), where copies from or to
/// the host move at the link's pace.
pub(super) fn device_copy_gb_s(o: &Op, bandwidth_gb_s: f64) -> f64 {
    match &o.kind {
        OpKind::Memcpy {
            bytes, direction, ..
        } if o.duration_ns > 0.0
            && CopyDirection::of(direction) == CopyDirection::DeviceToDevice =>
        {
            let gb_s = 2.0 * *bytes as f64 / o.duration_ns;
            if bandwidth_gb_s > 0.0 {
                gb_s.min(bandwidth_gb_s)
            } else {
                gb_s
            }
        }
        _ => 0.0,
    }
}

/// At most this many of a kernel's blocks fit an SM for it to count as a kernel of fat
/// blocks: the measured pair's GEMMs hold one an SM, decode attention two.
const FAT_BLOCKS_PER_SM: u32 = 2;

/// The share of the GPU `o` holds while it runs beside other lanes: its blocks' share of
/// what the SMs hold ([`SmLimits::share`]); for one round of fat blocks
/// ([`FAT_BLOCKS_PER_SM`]) at least the share of SMs its blocks spread over, one an SM
/// ([`SmLimits::spread`]: the block scheduler hands idle SMs out first, and a fat block
/// leaves no room on its SM for another kernel's fat block, as a radix sort's 98 blocks of
/// 45 KB beside 128 whole-SM GEMM blocks find); but no more than the profile's widest GEMM
/// pair says ([`crate::beside::BesideCosts::one_round_hold`]) for a kernel like that pair's:
/// one round of fat blocks whose time is not its math. A recorded GEMM is such a kernel where
/// the profile's peaks put it far below the ridge ([`Roofline::far_below_ridge`]: two
/// 256-token prefill GEMMs side by side take as long as one after the other); a cuBLAS
/// kernel they cannot judge (no shapes recorded, or a profile without peaks) keeps its share.
///
/// An IEEE `f32` GEMM ([`on_fma_units`]) holds the SMs its blocks spread over, one an SM,
/// whatever room its registers leave, but no more than the widest pair says: its blocks keep
/// their SMs' schedulers issuing FMAs and loads, and another kernel's blocks on those SMs take
/// issue slots from them rather than idle ones, yet leave some (each block waits on its
/// loads), as the widest pair's blocks do. On the H200 two cuBLASLt f32 GEMMs side by side
/// (96 blocks of 128 threads, room for four an SM) each ran 1.43 times as long as alone; by
/// their blocks' room they hold 0.18 of the GPU each, by their flops 0.38 of the `f32` peak,
/// and `--summary` priced such walks 22-32% short.
pub(super) fn held_share(
    o: &Op,
    l: &SmLimits,
    m: &ModelInputs,
    roofline: Option<&Roofline>,
) -> f64 {
    let share = l.share(o);
    let OpKind::Kernel { block, .. } = &o.kind else {
        return share;
    };
    let pair_hold = m.graph_node_beside.and_then(|c| c.one_round_hold());
    if roofline.is_some_and(|r| on_fma_units(o, r)) {
        let spread = l.spread(o).max(share);
        return pair_hold.map_or(spread, |hold| spread.min(hold).max(share));
    }
    let threads = block.0.saturating_mul(block.1).saturating_mul(block.2);
    let fat = l.resident_blocks(threads, o.resources) <= FAT_BLOCKS_PER_SM;
    if !(fat && l.one_round(o)) {
        return share;
    }
    let spread = l.spread(o).max(share);
    let not_math = match (o.matmul, roofline) {
        (Some(MatmulRole::Call(_)), Some(r)) => r.far_below_ridge(o),
        _ => !is_blas_kernel(&o.name),
    };
    match pair_hold {
        Some(hold) if not_math => spread.min(hold),
        _ => spread,
    }
}

/// Whether `o` is a recorded `f32` GEMM that ran on the FMA units (not TF32 tensor cores,
/// [`Roofline::as_run`]). Those of few tokens too: cuBLAS's f32 kernels for them read their
/// weights at well under the device's bandwidth (8 × 4096 × 4096 in 39 µs, 1.7 TB/s of 4.1;
/// 4 × 4096 × 4096 in 63 µs), held by their blocks' issue as the others are. Held out, that
/// part did no better than leaving them to their blocks' room (five f32 GEMV walks, 2 within
/// 10% either way): two such GEMVs side by side slow each other far less than their hold says
/// (+17.9%), beside an FMA-bound GEMM far more (−15.1%).
pub(super) fn on_fma_units(o: &Op, r: &Roofline) -> bool {
    r.as_run(o)
        .is_some_and(|g| g.dtype == memra_engine::GemmType::F32)
}

/// What a kernel or a device-to-device copy asks of device memory, GB/s (bytes / ns), where
/// the trace says its bytes: a copy's ([`device_copy_gb_s`]), a recorded GEMM's operands, or
/// for an element-wise or normalisation kernel (by name) its operator's recorded inputs, what
/// reading some across their rows moves beyond them (whole sectors,
/// [`crate::trace::across_rows`]) and the result it writes (as large as the largest input),
/// at most `bandwidth_gb_s` (where
/// known: more than the memory it reads from gives means it did not read all it was given).
/// An element-wise kernel of a walk within the L2 asks the L2 for what it writes instead
/// ([`written_gb_s`]): on an H100 two lanes of adds over 4 MiB buffers, 4.5 TB/s each alone,
/// ran +69% side by side, priced +13% with each read at device memory's 3 TB/s
/// (`scripts/elementwise_lanes_probe.py`). 0 for other kernels, whose time is not only their
/// bytes, and other ops.
pub(super) fn known_gb_s(o: &Op, bandwidth_gb_s: f64) -> f64 {
    let copy = device_copy_gb_s(o, bandwidth_gb_s);
    if copy > 0.0 {
        return copy;
    }
    let gemm = gemm_gb_s(o);
    if gemm > 0.0 || o.duration_ns <= 0.0 {
        return gemm;
    }
    let (Some(read), Some(moved), Some(largest)) =
        (o.input_bytes, o.read_bytes_moved(), o.largest_input_bytes)
    else {
        return 0.0;
    };
    if is_attention(&o.name) && !is_element_wise(&o.name) {
        // Keys and values read, the output (a query's size) left out. More than the device
        // could read in the recorded time: the operator was given more than the kernel read
        // (a paged cache's whole pool), and what it read is not known.
        let gb_s = read / o.duration_ns;
        return if bandwidth_gb_s > 0.0 && gb_s > bandwidth_gb_s {
            0.0
        } else {
            gb_s
        };
    }
    if !(is_element_wise(&o.name) || is_normalisation(&o.name)) {
        return 0.0;
    }
    let gb_s = (moved + largest) / o.duration_ns;
    if bandwidth_gb_s > 0.0 {
        gb_s.min(bandwidth_gb_s)
    } else {
        gb_s
    }
}

/// What an element-wise or normalisation kernel (by name) asks of the L2's written part,
/// GB/s (bytes / ns) over its recorded time, at most `bandwidth_gb_s` (where known): the
/// result it writes, as large as its largest recorded input, or a third
/// ([`crate::l2_lanes::WRITTEN_PART`]) of all it moves where that is more — its inputs, what
/// reading some across their rows moves beyond them ([`crate::trace::across_rows`]), and its
/// result. The measured lanes of adds (two read, one written) moved the L2's figure, of which
/// the written third is what held them: lanes of unary kernels writing as much took as long.
/// A kernel that moves more than three times what it writes asks more of the L2 than its
/// writes: on an H100 four lanes of `(y + y.T) * 0.5` over 512 x 512 fp16, the transpose read
/// a 32-byte sector an element, ran 1.7 times the price of their writes (−39.9%; −20.9% so),
/// four of `torch.addcmul` (three f32 inputs) −12.2% (+2.8%). What it reads across rows
/// counts at the pace such reads reach ([`crate::l2_lanes::ACROSS_ROW_PACE`]): the same
/// transposes −20.9 → −7.8%, three lanes of 768 x 768 ones −23.8 → −5.2%. 0 for other ops,
/// whose written bytes the trace does not say. Kernels of lanes within the L2 share the L2 by
/// this.
pub(super) fn written_gb_s(o: &Op, bandwidth_gb_s: f64) -> f64 {
    let Some(largest) = o.largest_input_bytes else {
        return 0.0;
    };
    if !o.is_kernel()
        || o.duration_ns <= 0.0
        || !(is_element_wise(&o.name) || is_normalisation(&o.name))
    {
        return 0.0;
    }
    // Reads across rows take the L2 at its pace for them, not at its pace for whole lines.
    let excess = o.across_row_excess_bytes.unwrap_or(0.0);
    let slower = excess * (1.0 / crate::l2_lanes::ACROSS_ROW_PACE - 1.0);
    let moved = o.read_bytes_moved().unwrap_or(0.0) + largest + slower;
    let gb_s = largest.max(moved * crate::l2_lanes::WRITTEN_PART) / o.duration_ns;
    if bandwidth_gb_s > 0.0 {
        gb_s.min(bandwidth_gb_s)
    } else {
        gb_s
    }
}

/// A recorded GEMM's operand bytes over its recorded duration, GB/s (bytes / ns); 0 for
/// kernels whose bytes the trace does not say.
pub(super) fn gemm_gb_s(o: &Op) -> f64 {
    match o.matmul {
        Some(MatmulRole::Call(g)) if o.duration_ns > 0.0 => {
            crate::trace::matmul::operand_bytes(&g) as f64 / o.duration_ns
        }
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests;
