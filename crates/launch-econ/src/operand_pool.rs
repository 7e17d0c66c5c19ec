//! Where a replay's real GEMMs read and write.
//!
//! Each GEMM run for real needs an A, a B and a C (and a bias). How many distinct buffers a replay
//! spreads them over sets how much of its walk stays in L2 between kernels: on the H200, PyTorch's
//! graph of two streams of batched matmuls ran 33.9 µs and 41.2 µs once every GEMM read and wrote
//! memory of its own (one stream alone: 22.5 µs either way; `scripts/operand_reuse_probe.py`,
//! docs/validation-h200.md "Where a replay's GEMMs read and write").

use std::collections::HashMap;

use memra_engine::{DeviceBuffer, Engine, Gemm, GemmType};
use serde::{Deserialize, Serialize};

/// Where a replay's real GEMMs read and write (`--gemm-operands`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum GemmOperands {
    /// Every operand of every GEMM a buffer of its own: a walk's activations and outputs
    /// spread over as much memory as its weights.
    #[default]
    Fresh,
    /// Weights (PyTorch's second operand, cuBLAS's A, and a bias) of their own; activations
    /// (PyTorch's first operand, cuBLAS's B) and outputs one buffer per element type and size on
    /// each stream, as PyTorch's caching allocator hands freed activation blocks out again.
    Recycled,
}

/// What a recycled buffer holds: a GEMM's activation operand is only read, so it keeps its
/// drawn values; an output is written, and read back only by a GEMM that adds to C (as under
/// fresh operands): no GEMM reads another's product, whose values would grow replay by replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    Activation,
    Output,
}

/// Pool indices of one GEMM's operands; `c` differs from the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GemmSlots {
    a: usize,
    b: usize,
    c: usize,
    bias: Option<usize>,
}

/// Which buffers one lane's real GEMMs use, before any is allocated: each buffer's element
/// type and size, and each GEMM's slots in them.
#[derive(Debug)]
pub(crate) struct OperandLayout {
    policy: GemmOperands,
    buffers: Vec<(GemmType, usize)>,
    /// Recycled: the buffer of each (role, type, bytes).
    shared: HashMap<(Role, GemmType, usize), usize>,
}

impl OperandLayout {
    pub(crate) fn new(policy: GemmOperands) -> OperandLayout {
        OperandLayout {
            policy,
            buffers: Vec::new(),
            shared: HashMap::new(),
        }
    }

    /// Where `gemm`, the lane's next GEMM, reads and writes; new buffers where the policy
    /// wants them.
    pub(crate) fn place(&mut self, gemm: &Gemm) -> GemmSlots {
        let (a, b, c) = gemm.bytes();
        let ty = gemm.dtype;
        let a = self.new_buf(ty, a);
        let (b, c) = match self.policy {
            GemmOperands::Fresh => (self.new_buf(ty, b), self.new_buf(ty, c)),
            GemmOperands::Recycled => (
                self.shared_buf(Role::Activation, ty, b),
                self.shared_buf(Role::Output, ty, c),
            ),
        };
        let bias = gemm.bias.then(|| self.new_buf(ty, gemm.bias_bytes()));
        GemmSlots { a, b, c, bias }
    }

    fn new_buf(&mut self, ty: GemmType, bytes: usize) -> usize {
        self.buffers.push((ty, bytes));
        self.buffers.len() - 1
    }

    fn shared_buf(&mut self, role: Role, ty: GemmType, bytes: usize) -> usize {
        if let Some(&i) = self.shared.get(&(role, ty, bytes)) {
            return i;
        }
        let i = self.new_buf(ty, bytes);
        self.shared.insert((role, ty, bytes), i);
        i
    }
}

/// The buffers of an [`OperandLayout`] on the device, filled with values like a model's
/// ([`crate::gemm_operands`]: a GEMM over zeros or a constant draws less power than a model's
/// and, on a GPU at its power limit, runs faster than the recorded one did).
pub(crate) struct OperandPool {
    bufs: Vec<DeviceBuffer<u8>>,
}

impl OperandPool {
    pub(crate) fn allocate(e: &Engine, layout: &OperandLayout) -> memra_engine::Result<Self> {
        let bufs = layout
            .buffers
            .iter()
            .map(|&(ty, n)| e.htod(&crate::gemm_operands::operand_bytes(ty, n)))
            .collect::<memra_engine::Result<_>>()?;
        Ok(OperandPool { bufs })
    }

    /// Bytes of all the pool's buffers: what one replay of its GEMMs touches.
    pub(crate) fn bytes(&self) -> usize {
        self.bufs.iter().map(|b| b.len()).sum()
    }

    /// Issues `gemm` over its operands `s` (placed by the layout this pool was allocated from).
    pub(crate) fn run(
        &mut self,
        e: &Engine,
        gemm: &Gemm,
        s: GemmSlots,
    ) -> memra_engine::Result<()> {
        // C is borrowed mutably, the others shared: the layout never places C where A, B or
        // the bias is.
        let (low, high) = self.bufs.split_at_mut(s.c);
        let (c, high) = high
            .split_first_mut()
            .expect("a GEMM's C is one of the pool's buffers");
        let get = |i: usize| -> &DeviceBuffer<u8> {
            if i < s.c {
                &low[i]
            } else {
                &high[i - s.c - 1]
            }
        };
        match s.bias {
            Some(bias) => e.gemm_bias(gemm, get(s.a), get(s.b), get(bias), c),
            None => e.gemm(gemm, get(s.a), get(s.b), c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of all the layout's buffers, as the pool allocated from it would hold.
    fn bytes(l: &OperandLayout) -> usize {
        l.buffers.iter().map(|&(_, n)| n).sum()
    }

    /// torch.bmm(x[16, 256, 128], w[16, 128, 256]) in bf16, as the trace reader makes it.
    fn bmm(rows: u32, inner: u32, cols: u32) -> Gemm {
        Gemm {
            dtype: GemmType::Bf16,
            m: cols,
            n: rows,
            k: inner,
            trans_a: false,
            trans_b: false,
            batch: 16,
            accumulate: false,
            bias: false,
        }
    }

    /// Three bmm(bmm(y, k), q) of one branch of two streams of batched matmuls.
    fn branch() -> Vec<Gemm> {
        (0..3)
            .flat_map(|_| [bmm(256, 128, 256), bmm(256, 256, 128)])
            .collect()
    }

    #[test]
    fn fresh_gives_every_operand_a_buffer_of_its_own() {
        let mut l = OperandLayout::new(GemmOperands::Fresh);
        let slots: Vec<_> = branch().iter().map(|g| l.place(g)).collect();
        let mut seen: Vec<usize> = slots.iter().flat_map(|s| [s.a, s.b, s.c]).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 18);
        let want: usize = branch()
            .iter()
            .map(|g| {
                let (a, b, c) = g.bytes();
                a + b + c
            })
            .sum();
        assert_eq!(bytes(&l), want);
        assert_eq!(want, 24 << 20);
    }

    #[test]
    fn recycled_shares_activations_and_outputs_by_size_and_keeps_weights_apart() {
        let mut l = OperandLayout::new(GemmOperands::Recycled);
        let slots: Vec<_> = branch().iter().map(|g| l.place(g)).collect();
        // Weights: six distinct buffers, never shared.
        let mut weights: Vec<usize> = slots.iter().map(|s| s.a).collect();
        weights.dedup();
        assert_eq!(weights.len(), 6);
        // Activations and outputs: one buffer per size, the same for every pair.
        for pair in slots.chunks(2) {
            assert_eq!((pair[0].b, pair[0].c), (slots[0].b, slots[0].c));
            assert_eq!((pair[1].b, pair[1].c), (slots[1].b, slots[1].c));
        }
        // An output never lands where its GEMM reads.
        for s in &slots {
            assert!(s.c != s.a && s.c != s.b);
        }
        // 6 weights of 1 MiB; activations of 1 and 2 MiB; outputs of 2 and 1 MiB.
        assert_eq!(bytes(&l), 12 << 20);
    }

    #[test]
    fn a_bias_is_a_weight_of_its_own() {
        let mut g = bmm(512, 2048, 2048);
        g.batch = 1;
        g.bias = true;
        let mut l = OperandLayout::new(GemmOperands::Recycled);
        let (x, y) = (l.place(&g), l.place(&g));
        assert!(x.bias.is_some() && x.bias != y.bias);
        assert_eq!((x.b, x.c), (y.b, y.c));
        assert_ne!(x.a, y.a);
    }
}
