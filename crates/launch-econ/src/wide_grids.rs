//! Wide grids: a graph node of a kernel with many blocks costs less beyond its profiled
//! duration than one of a few blocks.
//!
//! Every node is planned at its recorded (profiled) duration + one front-end gap measured on
//! a one-block kernel. What a profiler adds to a kernel's own time grows with its grid: on an
//! H200 a memory kernel (one float per thread, operands in the L2) launched eagerly costs a
//! graph node 0.20–0.28 µs beyond its CUPTI duration up to 264 blocks, ~0.05 at 528, and
//! −0.03 to −0.17 from 1056 blocks on (128 threads; at 512 threads down to −2.3 µs, the
//! eager launch running slower than back to back) — `scripts/grid_node_probe.py`. A walk of
//! 1024-block element-wise kernels replayed at `recorded + gap` came out 13% long.
//!
//! How much less depends on the kernel, not only its grid: PyTorch's own element-wise add
//! loses less of its small-grid figure than the memory kernel (at 1056 blocks 0.21 µs in
//! bfloat16, 0.05 in float32, against 0.31), so the table holds rows of two families and a
//! kernel is priced by its own: element-wise kernels ([`crate::trace::is_element_wise`]) by
//! PyTorch's add, every other by the memory kernel (CuPy's element-wise kernels measured as
//! it does). A family's kernels each shift from their own smallest grid; an element-wise
//! kernel takes the add measured at the element size nearest its own (PyTorch's names say
//! the type: a block of its vectorized kernel holds 1024 elements, so float32 blocks move
//! twice bfloat16's bytes), the mean of both where its name does not say.
//!
//! Only a profiler sees the difference, so the engine cannot measure it: the probe does, with
//! CUPTI, and its JSON is the table here (the H200's ships with launch-econ; measure another
//! GPU's with the probe and pass it with `--grid-nodes`). A kernel's shift is the probe's
//! node − profiled at its block count (interpolated in log blocks, for the nearest thread
//! count measured) less that at the smallest grid measured: the one-block gap already stands
//! for small grids. What the probe cannot say is where a kernel's operands live: the same
//! kernel reading a fresh array from device memory each launch cost 0.17 µs more at 8192
//! blocks than reading from the L2, so wide kernels that read weights come out short by up to
//! that much a node.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::trace::{is_element_wise, Op, OpKind};

/// The table shipped for the H200 (`scripts/grid_node_probe.py` on an H200, driver 580).
pub const H200_TABLE: &str = include_str!("../../../profiles/h200-grid-nodes.json");

/// Which grid table to price wide kernels with (`--grid-nodes`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GridNodes {
    /// The table shipped for the device, where one is (the H200's); none on other devices.
    #[default]
    Shipped,
    /// None: every node at its recorded duration + the one-block gap.
    Off,
    /// A table written by `scripts/grid_node_probe.py`.
    File(std::path::PathBuf),
}

impl GridNodes {
    /// `off`, or the path of a table.
    pub fn parse(s: &str) -> Result<GridNodes, String> {
        match s.trim() {
            "" => Err("expected a grid table's path or `off`".into()),
            "off" => Ok(GridNodes::Off),
            p => Ok(GridNodes::File(p.into())),
        }
    }

    /// The table for a device named `device`.
    pub fn table_for(&self, device: &str) -> anyhow::Result<Option<WideGrids>> {
        match self {
            GridNodes::Shipped => Ok(WideGrids::shipped_for(device)),
            GridNodes::Off => Ok(None),
            GridNodes::File(p) => WideGrids::read(p).map(Some),
        }
    }
}

/// Which recorded kernels a row of the table prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GridFamily {
    /// The probe's memory kernel: every kernel without a family of its own.
    #[default]
    Memory,
    /// A framework's element-wise kernel (PyTorch's add): kernels
    /// [`crate::trace::is_element_wise`] names.
    ElementWise,
}

/// One measured grid: a kernel of `blocks` blocks of `threads` threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridCase {
    pub threads: u32,
    pub blocks: u32,
    /// Its graph node time (unprofiled) less its profiled duration launched eagerly, µs.
    pub node_minus_profiled_us: f64,
    /// The recorded kernels it prices (tables without the key hold the memory kernel only).
    #[serde(default)]
    pub family: GridFamily,
    /// Which kernel of the family it was measured on: each shifts from its own smallest grid.
    #[serde(default)]
    pub kernel: String,
    /// The size of that kernel's elements, bytes, where the probe says.
    #[serde(default)]
    pub element_bytes: Option<u32>,
}

impl GridCase {
    /// A grid measured on the probe's memory kernel.
    pub fn memory(threads: u32, blocks: u32, node_minus_profiled_us: f64) -> GridCase {
        GridCase {
            threads,
            blocks,
            node_minus_profiled_us,
            family: GridFamily::Memory,
            kernel: String::new(),
            element_bytes: None,
        }
    }
}

/// The measured grids of one device (`cases` of the probe's JSON; other keys are ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WideGrids {
    pub device: String,
    pub cases: Vec<GridCase>,
}

impl WideGrids {
    /// The H200 table shipped with launch-econ.
    pub fn h200() -> WideGrids {
        serde_json::from_str(H200_TABLE).expect("the shipped grid table is valid")
    }

    /// The shipped table where `device` is the GPU it was measured on (names compared
    /// without case), else `None`: another GPU's profiler adds its own.
    pub fn shipped_for(device: &str) -> Option<WideGrids> {
        let t = WideGrids::h200();
        crate::document::same_gpu(device, &t.device).then_some(t)
    }

    /// Reads a table written by `scripts/grid_node_probe.py`; at least one case, every figure
    /// finite and every grid non-empty.
    pub fn read(path: &Path) -> anyhow::Result<WideGrids> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let t: WideGrids = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a grid table (scripts/grid_node_probe.py's JSON): {e}",
                path.display()
            )
        })?;
        if t.cases.is_empty() {
            anyhow::bail!("{} holds no grids", path.display());
        }
        if let Some(c) = t
            .cases
            .iter()
            .find(|c| c.threads == 0 || c.blocks == 0 || !c.node_minus_profiled_us.is_finite())
        {
            anyhow::bail!(
                "{}: grid {} x {} threads has no usable figure",
                path.display(),
                c.blocks,
                c.threads
            );
        }
        Ok(t)
    }

    /// What a kernel of `class` with `blocks` blocks of `threads` threads costs a graph node
    /// beyond its profiled duration, less what the smallest grid measured costs, µs (see the
    /// module docs): 0 at or below the smallest grid, the largest grid's beyond the largest;
    /// a grid measured more than once at its mean. Within the family, the kernels measured at
    /// the element size nearest the kernel's, averaged (all of them where either size is
    /// unknown). A family the table has no rows for is priced by the memory kernel's.
    pub fn node_shift_us(&self, blocks: u64, threads: u64, class: KernelClass) -> f64 {
        let family = if self.cases.iter().any(|c| c.family == class.family) {
            class.family
        } else {
            GridFamily::Memory
        };
        let log2 = |x: f64| x.max(1.0).log2();
        let of_family = || self.cases.iter().filter(|c| c.family == family);
        let Some(row_threads) = of_family().map(|c| c.threads).min_by(|&a, &b| {
            let d = |t: u32| (log2(f64::from(t)) - log2(threads as f64)).abs();
            d(a).total_cmp(&d(b)).then(a.cmp(&b))
        }) else {
            return 0.0;
        };
        let measured = || of_family().filter(|c| c.threads == row_threads);
        // How far a row's element size lies from the kernel's; 0 for every row where either
        // is unknown.
        let distance = |c: &GridCase| match (class.element_bytes, c.element_bytes) {
            (Some(k), Some(r)) => (log2(f64::from(k)) - log2(f64::from(r))).abs(),
            _ => 0.0,
        };
        let nearest = measured().map(distance).fold(f64::INFINITY, f64::min);
        let mut kernels: Vec<&str> = measured()
            .filter(|c| distance(c) == nearest)
            .map(|c| c.kernel.as_str())
            .collect();
        kernels.sort_unstable();
        kernels.dedup();
        let total: f64 = kernels
            .iter()
            .map(|k| {
                shift_along(
                    &grid_row(measured().filter(|c| c.kernel == *k)),
                    blocks as f64,
                )
            })
            .sum();
        total / kernels.len() as f64
    }

    /// [`Self::node_shift_us`] of a recorded kernel, ns; 0 for copies and memsets.
    pub fn op_shift_ns(&self, o: &Op) -> f64 {
        match o.kind {
            OpKind::Kernel { grid, block } => {
                let count = |d: (u32, u32, u32)| u64::from(d.0) * u64::from(d.1) * u64::from(d.2);
                self.node_shift_us(count(grid), count(block), KernelClass::of(&o.name)) * 1e3
            }
            _ => 0.0,
        }
    }
}

/// What the table needs to know of a recorded kernel besides its launch shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelClass {
    pub family: GridFamily,
    /// The size of its elements, bytes, where its name says (PyTorch's kernel names carry
    /// their types): a block of PyTorch's vectorized kernel holds a fixed count of elements,
    /// so a 4-byte type's blocks move twice a 2-byte type's bytes.
    pub element_bytes: Option<u32>,
}

impl KernelClass {
    /// A kernel without a family of its own.
    pub const MEMORY: KernelClass = KernelClass {
        family: GridFamily::Memory,
        element_bytes: None,
    };

    /// The class a kernel's name puts it in.
    pub fn of(name: &str) -> KernelClass {
        if !is_element_wise(name) {
            return KernelClass::MEMORY;
        }
        let has = |types: &[&str]| types.iter().any(|t| name.contains(t));
        let element_bytes = if has(&["c10::Half", "c10::BFloat16", "__half", "__nv_bfloat16"]) {
            Some(2)
        } else if has(&["float"]) {
            Some(4)
        } else if has(&["double"]) {
            Some(8)
        } else {
            None
        };
        KernelClass {
            family: GridFamily::ElementWise,
            element_bytes,
        }
    }
}

/// One kernel's measured grids as (blocks, figure), by blocks, a grid measured more than
/// once at its mean.
fn grid_row<'a>(cases: impl Iterator<Item = &'a GridCase>) -> Vec<(f64, f64)> {
    let mut row: Vec<(f64, f64, u32)> = Vec::new();
    for c in cases {
        let b = f64::from(c.blocks);
        match row.iter_mut().find(|p| p.0 == b) {
            Some(p) => {
                p.1 += c.node_minus_profiled_us;
                p.2 += 1;
            }
            None => row.push((b, c.node_minus_profiled_us, 1)),
        }
    }
    row.sort_by(|a, b| a.0.total_cmp(&b.0));
    row.into_iter()
        .map(|(b, s, n)| (b, s / f64::from(n)))
        .collect()
}

/// The figure at `b` blocks along `row` (interpolated in log blocks, clamped to its ends)
/// less its first, µs.
fn shift_along(row: &[(f64, f64)], b: f64) -> f64 {
    let base = row[0].1;
    let at = if b <= row[0].0 {
        base
    } else if b >= row[row.len() - 1].0 {
        row[row.len() - 1].1
    } else {
        let i = row.partition_point(|p| p.0 <= b);
        let ((b0, d0), (b1, d1)) = (row[i - 1], row[i]);
        d0 + (d1 - d0) * (b.ln() - b0.ln()) / (b1.ln() - b0.ln())
    };
    at - base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> WideGrids {
        let case = GridCase::memory;
        WideGrids {
            device: "GPU".into(),
            cases: vec![
                case(128, 8, 0.3),
                case(128, 64, 0.3),
                case(128, 512, 0.0),
                case(512, 8, 0.2),
                case(512, 512, -1.0),
            ],
        }
    }

    const MEMORY: KernelClass = KernelClass::MEMORY;
    const ELEMENT_WISE: KernelClass = KernelClass {
        family: GridFamily::ElementWise,
        element_bytes: None,
    };

    fn element_wise(kernel: &str, bytes: u32, blocks: u32, d: f64) -> GridCase {
        GridCase {
            family: GridFamily::ElementWise,
            kernel: kernel.into(),
            element_bytes: Some(bytes),
            ..GridCase::memory(128, blocks, d)
        }
    }

    #[test]
    fn small_grids_shift_nothing_and_wide_ones_shift_by_the_table() {
        let t = table();
        assert_eq!(t.node_shift_us(1, 128, MEMORY), 0.0);
        assert_eq!(t.node_shift_us(8, 128, MEMORY), 0.0);
        assert!((t.node_shift_us(512, 128, MEMORY) + 0.3).abs() < 1e-12);
        // Beyond the largest grid: the largest grid's figure.
        assert!((t.node_shift_us(1 << 20, 128, MEMORY) + 0.3).abs() < 1e-12);
    }

    #[test]
    fn between_grids_the_shift_is_interpolated_in_log_blocks() {
        // 181 blocks lies half way from 64 to 512 in log blocks (64 * 2^1.5 = 181.02).
        let s = table().node_shift_us(181, 128, MEMORY);
        assert!((s + 0.15).abs() < 1e-3, "{s}");
    }

    #[test]
    fn the_nearest_thread_count_measured_is_used() {
        let t = table();
        assert!((t.node_shift_us(512, 384, MEMORY) + 1.2).abs() < 1e-12);
        assert!((t.node_shift_us(512, 64, MEMORY) + 0.3).abs() < 1e-12);
    }

    #[test]
    fn a_family_without_rows_is_priced_by_the_memory_kernel() {
        let t = table();
        assert_eq!(
            t.node_shift_us(512, 128, ELEMENT_WISE),
            t.node_shift_us(512, 128, MEMORY)
        );
    }

    #[test]
    fn element_wise_kernels_shift_by_their_family_each_kernel_from_its_own_smallest_grid() {
        let mut t = table();
        t.cases.extend([
            element_wise("f32", 4, 8, 0.30),
            element_wise("f32", 4, 512, 0.20),
            element_wise("bf16", 2, 8, 0.20),
            element_wise("bf16", 2, 512, -0.10),
            // Measured twice: at the mean, -0.20.
            element_wise("bf16", 2, 512, -0.30),
        ]);
        // f32 -0.10, bf16 -0.40: of unknown size, the family's mean.
        let s = t.node_shift_us(512, 128, ELEMENT_WISE);
        assert!((s + 0.25).abs() < 1e-12, "{s}");
        // The memory kernel's rows are untouched by the family's.
        assert!((t.node_shift_us(512, 128, MEMORY) + 0.3).abs() < 1e-12);
        let kernel = |name: &str| Op {
            kind: OpKind::Kernel {
                grid: (512, 1, 1),
                block: (128, 1, 1),
            },
            ..Op::kernel(name, 0.0, 5000.0)
        };
        // Of a known size: the kernel measured at the nearest size.
        let half = kernel("void at::native::vectorized_elementwise_kernel<8, add<c10::Half>>");
        assert!((t.op_shift_ns(&half) + 400.0).abs() < 1e-9);
        let double = kernel("void at::native::elementwise_kernel<128, 4, mul<double>>");
        assert!((t.op_shift_ns(&double) + 100.0).abs() < 1e-9);
        let untyped = kernel("triton_poi_fused_add_0");
        assert!((t.op_shift_ns(&untyped) + 250.0).abs() < 1e-9);
        assert!((t.op_shift_ns(&kernel("layer_norm_kernel<float>")) + 300.0).abs() < 1e-9);
    }

    #[test]
    fn a_kernel_name_gives_its_family_and_element_size() {
        let of = KernelClass::of;
        assert_eq!(of("void at::native::reduce_kernel<512, 1>"), MEMORY);
        let sized = |b| KernelClass {
            element_bytes: Some(b),
            ..ELEMENT_WISE
        };
        let silu =
            "void at::native::vectorized_elementwise_kernel<8, silu::{lambda(c10::BFloat16)#1}>";
        assert_eq!(of(silu), sized(2));
        let mul = "void at::native::elementwise_kernel<128, 4, MulFunctor<float>>";
        assert_eq!(of(mul), sized(4));
        assert_eq!(of("triton_poi_fused_mul_silu_1"), ELEMENT_WISE);
    }

    #[test]
    fn the_shipped_table_reads_and_is_for_the_h200_only() {
        let t = WideGrids::h200();
        assert!(t.cases.len() >= 10);
        assert!(WideGrids::shipped_for("NVIDIA H200").is_some());
        assert!(WideGrids::shipped_for("NVIDIA A100-SXM4-80GB").is_none());
        // On the H200 a 1056-block kernel's node costs less beyond its profile than an
        // 8-block one's, PyTorch's add less so than the memory kernel.
        let (memory, add) = (
            t.node_shift_us(1056, 128, MEMORY),
            t.node_shift_us(1056, 128, ELEMENT_WISE),
        );
        assert!(memory < add && add < 0.0, "{memory} {add}");
    }

    #[test]
    fn the_option_takes_off_or_a_path() {
        assert_eq!(GridNodes::parse("off"), Ok(GridNodes::Off));
        assert_eq!(
            GridNodes::parse("t.json"),
            Ok(GridNodes::File("t.json".into()))
        );
        assert!(GridNodes::parse(" ").is_err());
        assert_eq!(GridNodes::Off.table_for("NVIDIA H200").unwrap(), None);
        assert!(GridNodes::Shipped
            .table_for("NVIDIA H200")
            .unwrap()
            .is_some());
    }

    #[test]
    fn a_file_that_is_not_a_table_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("wide-grids-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{\"device\": \"x\", \"cases\": []}").unwrap();
        let err = WideGrids::read(&bad).unwrap_err().to_string();
        assert!(err.contains("holds no grids"), "{err}");
        std::fs::write(&bad, "[1, 2]").unwrap();
        let err = WideGrids::read(&bad).unwrap_err().to_string();
        assert!(err.contains("is not a grid table"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
