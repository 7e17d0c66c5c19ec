//! `launch-econ buckets`: what a set of per-batch-size graphs costs at start-up and in memory,
//! against one executable switched by exec update.

use std::fmt::Write;

use crate::buckets::{run as run_buckets, BucketsConfig, BucketsResult};
use crate::commands::{check_outputs, deliver, start_engine, UsageError};
use crate::document::{CommandResult, Device, Document};
use crate::options::BucketsArgs;
use crate::output::num;

pub fn run(args: &BucketsArgs, argv: &[String]) -> anyhow::Result<()> {
    check_outputs(&args.export, &[])?;
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let largest = sizes.last().copied().unwrap_or(0);
    if largest.saturating_mul(args.elems_per_batch) > u64::from(u32::MAX) {
        return Err(UsageError(format!(
            "the largest bucket ({largest} x {} elements) exceeds the kernel's 32-bit index",
            args.elems_per_batch
        ))
        .into());
    }
    let e = start_engine(args.device, false)?;
    let cfg = BucketsConfig {
        sizes,
        nodes: args.nodes as usize,
        elems_per_batch: args.elems_per_batch as usize,
        repeats: args.repeats as usize,
    };
    eprintln!("building {} bucket graphs…", cfg.sizes.len());
    let r = run_buckets(&e, &cfg, &crate::interrupt::requested)?;
    let text = report(&Device::of(&e).name, &r);
    let doc = Document::new(argv, Some(Device::of(&e)), CommandResult::Buckets(r));
    deliver(&doc, &text, &args.export)
}

fn mib(bytes: i64) -> String {
    num(bytes as f64 / (1 << 20) as f64, 1)
}

/// The terminal report.
pub fn report(device: &str, r: &BucketsResult) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(
        out,
        "buckets on {device}: {} batch sizes ({}..{}), a step of {} add kernels over batch x {} elements",
        c.sizes.len(),
        c.sizes.first().unwrap_or(&0),
        c.sizes.last().unwrap_or(&0),
        c.nodes,
        c.elems_per_batch
    );
    let _ = writeln!(
        out,
        "  every bucket graph and the switched executable checked: own prefix written, nothing beyond ({} checks)\n",
        r.checked
    );
    let _ = writeln!(
        out,
        "  {:>6} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "batch", "build ms", "replay us", "padding us", "switch us", "update us"
    );
    let mut prev: Option<f64> = None;
    for b in &r.buckets {
        let gpu = b.replay_gpu_us.median;
        let pad = prev.map_or("-".to_string(), |p| num((gpu - p).max(0.0), 1));
        let _ = writeln!(
            out,
            "  {:>6} {:>10} {:>10} {:>12} {:>12} {:>12}",
            b.size,
            num(b.build_ms, 3),
            num(gpu, 1),
            pad,
            num(b.switch_us.median, 1),
            num(b.switch_update_us.median, 1)
        );
        prev = Some(gpu);
    }
    let builds: f64 = r.buckets.iter().map(|b| b.build_ms).sum();
    let switch_median = crate::stats::median(
        &r.buckets
            .iter()
            .map(|b| b.switch_us.median)
            .collect::<Vec<_>>(),
    );
    let _ = writeln!(
        out,
        "\n  bucket set: {} graphs built in {} s ({} ms of graph builds), holding {} MiB of device memory; {}",
        r.buckets.len(),
        num(r.set_build_s, 3),
        num(builds, 1),
        mib(r.set_memory_bytes),
        if r.returned_diff_bytes == 0 {
            "free memory back to its level before when dropped".to_string()
        } else {
            format!(
                "free memory {} MiB off its level before when dropped",
                mib(-r.returned_diff_bytes)
            )
        }
    );
    let _ = writeln!(
        out,
        "  one executable: built in {} ms, {} MiB; a switch of size (capture + exec update) {} us median",
        num(r.one_exec_build_ms, 3),
        mib(r.one_exec_memory_bytes),
        num(switch_median, 1)
    );
    let _ = writeln!(
        out,
        "  padding: a batch rounded up to the next bucket pays at most that bucket's replay minus the one below (column 'padding')"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buckets::Bucket;
    use crate::stats::Summary;

    fn bucket(size: u64, replay: f64) -> Bucket {
        Bucket {
            size,
            elems: size as usize * 1024,
            build_ms: 1.0,
            capture_ms: 0.3,
            instantiate_ms: 0.5,
            upload_ms: 0.2,
            replay_gpu_us: Summary::of(&[replay]),
            switch_us: Summary::of(&[100.0, 120.0]),
            switch_update_us: Summary::of(&[40.0]),
        }
    }

    fn result(returned: i64) -> BucketsResult {
        BucketsResult {
            config: BucketsConfig {
                sizes: vec![1, 2, 4],
                nodes: 8,
                elems_per_batch: 1024,
                repeats: 3,
            },
            buckets: vec![bucket(1, 50.0), bucket(2, 60.0), bucket(4, 90.0)],
            set_build_s: 0.003,
            set_memory_bytes: 6 << 20,
            returned_diff_bytes: returned,
            one_exec_build_ms: 1.0,
            one_exec_memory_bytes: 4 << 20,
            graph_mem_used_high: 0,
            checked: 4,
        }
    }

    #[test]
    fn report_shows_padding_memory_and_switch_cost() {
        let text = report("GPU", &result(0));
        let row = |b: &str| {
            text.lines()
                .find(|l| l.split_whitespace().next() == Some(b))
                .unwrap()
                .to_string()
        };
        // padding: a bucket's replay minus the one below it
        assert!(row("2").contains(" 10.0 "), "{text}");
        assert!(row("4").contains(" 30.0 "), "{text}");
        assert!(text.contains("holding 6.0 MiB"), "{text}");
        assert!(
            text.contains("free memory back to its level before"),
            "{text}"
        );
        assert!(
            text.contains("(capture + exec update) 110.0 us median"),
            "{text}"
        );
        let kept = report("GPU", &result(-(2 << 20)));
        assert!(
            kept.contains("free memory 2.0 MiB off its level before"),
            "{kept}"
        );
    }

    #[test]
    fn the_table_has_a_row_per_bucket() {
        let t = CommandResult::Buckets(result(0)).table();
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[2][0], "4");
        assert_eq!(t.rows[2][1], "4096");
        assert_eq!(t.columns[0], "batch");
    }
}
