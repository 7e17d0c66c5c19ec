//! The engine's kernel launches: the element-wise `add`, the empty `noop`, and the timed spins
//! that stand in for recorded kernels. Each is one method over the launch builder.

use cudarc::driver::{result, sys};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::graph::KernelCall;
use crate::kernels::Kernel;
use crate::launch::{Arg, Launch, LaunchShape};
use crate::memory::{DeviceBuffer, DeviceCopy};

/// Threads per block for element-wise kernels.
const BLOCK: u32 = 256;

/// How [`Engine::stream_paced_from`] spreads its read over GPU time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pace {
    /// GPU time from the grid's start that the read is spread over and lasts at least, ns.
    pub ns: u64,
    /// Sixteen loads in flight a thread in at most 96 registers
    /// ([`Engine::paced_deep_registers`]) instead of four in at most 32: for a kernel of few
    /// threads with many registers each (decode attention), which reads faster than a grid of
    /// as few threads with four loads each can, holding no more registers than it did.
    pub deep: bool,
}

/// The paced read's kernel: sixteen loads in flight a thread where `pace` reads deep.
fn paced_kernel(pace: Pace) -> Kernel {
    if pace.deep {
        Kernel::StreamPacedDeep
    } else {
        Kernel::StreamPaced
    }
}

impl Engine {
    pub(crate) fn kernel(&self, k: Kernel) -> Launch<'_> {
        Launch::new(&self.inner.core, &self.inner.kernels, k)
    }

    /// Checks an `add` like the op does; `None` when there is nothing to launch.
    fn add_checked(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &DeviceBuffer<f32>,
        n: usize,
    ) -> Result<Option<(u32, LaunchShape)>> {
        Ok(self
            .add_elements(a, b, y, n)?
            .map(|n32| (n32, LaunchShape::linear(n32.div_ceil(BLOCK), BLOCK))))
    }

    /// Checks an add's buffers and count; the count as the kernels take it, `None` for 0.
    fn add_elements(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &DeviceBuffer<f32>,
        n: usize,
    ) -> Result<Option<u32>> {
        let core = &self.inner.core;
        for (arg, buf) in [("a", a), ("b", b), ("y", y)] {
            buf.check_owner(core, "add", arg)?;
            core.check_len("add", arg, n, buf.len())?;
        }
        if n == 0 {
            return Ok(None);
        }
        let n32 = u32::try_from(n).map_err(|_| Error::InvalidArgument {
            op: "add",
            what: format!("{n} elements exceed the kernel's 32-bit index"),
        })?;
        Ok(Some(n32))
    }

    /// [`Engine::add`] four elements a thread, through 16-byte loads and stores: how a
    /// framework's vectorised element-wise kernel moves data (within the L2, lanes of
    /// [`Engine::add`] side by side move little more than half as much).
    pub fn add_x4(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
        n: usize,
    ) -> Result<()> {
        let Some(n32) = self.add_elements(a, b, y, n)? else {
            return Ok(());
        };
        let threads = n32.div_ceil(4);
        self.kernel(Kernel::AddF32x4)
            .buf(a)
            .buf(b)
            .buf(y)
            .u32(n32)
            .run(LaunchShape::linear(threads.div_ceil(BLOCK), BLOCK))
    }

    /// `y[i] = a[i] + b[i]` for `i < n`, on the engine stream.
    pub fn add(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
        n: usize,
    ) -> Result<()> {
        let Some((n32, shape)) = self.add_checked(a, b, y, n)? else {
            return Ok(());
        };
        self.kernel(Kernel::AddF32)
            .buf(a)
            .buf(b)
            .buf(y)
            .u32(n32)
            .run(shape)
    }

    /// The [`Engine::add`] launch as a [`KernelCall`], checked the same way, to set into a
    /// graph's kernel node ([`crate::Graph::set_kernel_node`]). `n` must be above 0.
    pub fn add_call(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
        n: usize,
    ) -> Result<KernelCall> {
        let (n32, shape) = self
            .add_checked(a, b, y, n)?
            .ok_or_else(|| Error::InvalidArgument {
                op: "add_call",
                what: "0 elements: a kernel node must launch something".into(),
            })?;
        KernelCall::new(Kernel::AddF32, shape, &self.inner.core)
            .buf_at(a, 0)?
            .buf_at(b, 0)?
            .buf_at(y, 0)
            .map(|c| c.arg(Arg::U32(n32)))
    }

    /// `y[i] = a[off + i] + b[i]` for `i < n`, where `off = win[slot*2]` and `n = win[slot*2+1]`
    /// are read from device memory when the kernel runs. Captured once, the graph follows a
    /// window the host moves between replays by writing `win` (device-side parameters, no
    /// graph update); the kernel never reads or writes outside `a`, `b` and `y`, whatever the
    /// window says. The grid covers `y.len()` elements.
    pub fn add_window(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
        win: &DeviceBuffer<u32>,
        slot: usize,
    ) -> Result<()> {
        let core = &self.inner.core;
        for (arg, buf) in [("a", a), ("b", b), ("y", &*y)] {
            buf.check_owner(core, "add_window", arg)?;
        }
        win.check_owner(core, "add_window", "win")?;
        core.check_len("add_window", "b", y.len(), b.len())?;
        let need = slot
            .checked_mul(2)
            .and_then(|s| s.checked_add(2))
            .unwrap_or(usize::MAX);
        core.check_len("add_window", "win", need, win.len())?;
        let n32 = |len: usize, arg: &str| {
            u32::try_from(len).map_err(|_| Error::InvalidArgument {
                op: "add_window",
                what: format!("{arg} holds {len} elements, over the kernel's 32-bit index"),
            })
        };
        let (a_len, y_len) = (n32(a.len(), "a")?, n32(y.len(), "y")?);
        if y_len == 0 {
            return Ok(());
        }
        self.kernel(Kernel::AddF32Window)
            .buf(a)
            .u32(a_len)
            .buf(b)
            .buf(y)
            .u32(y_len)
            .buf_at(win, (slot * 2 * 4) as u64)
            .run(LaunchShape::linear(y_len.div_ceil(BLOCK), BLOCK))
    }

    /// Launches the empty kernel with one block of one thread: the cheapest possible launch.
    pub fn noop(&self) -> Result<()> {
        self.noop_shaped(LaunchShape::linear(1, 1))
    }

    /// Launches the empty kernel with `shape`: what a grid of that shape costs when it does no
    /// work (a stand-in for recorded kernels shorter than any timed spin of their shape).
    pub fn noop_shaped(&self, shape: LaunchShape) -> Result<()> {
        self.kernel(Kernel::Noop).run(shape)
    }

    /// Launches a kernel that keeps every thread of `shape` busy for `ns` nanoseconds of the
    /// GPU clock, then writes the elapsed time to `sink[0]` if given. Stands in for a recorded
    /// kernel of known duration and launch shape.
    pub fn spin(
        &self,
        ns: u64,
        shape: LaunchShape,
        sink: Option<&mut DeviceBuffer<u32>>,
    ) -> Result<()> {
        let launch = self.kernel(Kernel::SpinNs).u64(ns);
        let launch = match sink {
            Some(s) => {
                s.check_owner(&self.inner.core, "spin", "sink")?;
                self.inner.core.check_len("spin", "sink", 1, s.len())?;
                launch.buf(s)
            }
            None => launch.null(),
        };
        launch.run(shape)
    }

    /// Words of a [`Engine::spin_grid`] slot.
    pub const SPIN_SLOT_WORDS: usize = 4;

    /// Launches a kernel of `shape` that runs for about `ns` nanoseconds as a whole, in however
    /// many waves its grid needs, and records its own span (first block start to last block
    /// end, ns) in `slots[slot * 4 + 2]`. Slots must start zeroed and are reset by the kernel,
    /// so one slot can serve the same op in every graph replay; two ops must not share a slot.
    pub fn spin_grid(
        &self,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        self.slotted_spin(Kernel::SpinGridNs, "spin_grid", ns, shape, slots, slot)
    }

    /// [`Engine::spin_grid`] with every block busy for `ns` from its own start: where the
    /// grid's blocks cannot all run at once (more than the GPU holds, or SMs held by other
    /// streams' kernels) it lasts a wave of `ns` per round of blocks. Stands in for a kernel
    /// whose blocks each take its time, which stretches when it finds the SMs taken.
    pub fn spin_blocks(
        &self,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        self.slotted_spin(Kernel::SpinBlocksNs, "spin_blocks", ns, shape, slots, slot)
    }

    /// Launches `kernel`, a spin of (ns, slot) parameters, on a checked slot.
    fn slotted_spin(
        &self,
        kernel: Kernel,
        op: &'static str,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        let offset = self.spin_grid_checked(op, slots, slot)?;
        self.kernel(kernel).u64(ns).buf_at(slots, offset).run(shape)
    }

    /// Launches a kernel of `shape` that reads `bytes` bytes of `src` from `byte_offset` on
    /// (sixteen at a time, spread over the whole grid) and records its span in `slots` like
    /// [`Engine::spin_grid`]; word 1 of the slot is raised to the time its last block ended
    /// ([`Engine::stream_span`] reads both). Stands in for a recorded kernel that streams its
    /// operands from memory: on an H200 such kernels cost more per graph node than a spin of
    /// the same length (~0.36 vs ~0.18 µs between the GPU's two per-node levels).
    /// `byte_offset` and `bytes` must be multiples of 16.
    pub fn stream_grid<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        byte_offset: usize,
        bytes: usize,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        if byte_offset % 16 != 0 {
            return Err(Error::InvalidArgument {
                op: "stream_grid",
                what: format!("offset {byte_offset} must be a multiple of 16 bytes"),
            });
        }
        let need = byte_offset.saturating_add(bytes);
        let words = self.stream_words("stream_grid", src, need, bytes, shape)?;
        let offset = self.spin_grid_checked("stream_grid", slots, slot)?;
        self.kernel(Kernel::StreamGrid)
            .buf_at(src, byte_offset as u64)
            .u64(words)
            .u64(words)
            .null()
            .buf_at(slots, offset)
            .run(shape)
    }

    /// [`Engine::stream_grid`] reading `bytes` of `src` from where `cursor[0]` says (in 16-byte
    /// words, taken modulo the room `src` leaves for the read, so the read always lies inside
    /// `src`), leaving the cursor just past the read: launches that share a cursor, eager or in
    /// a graph, read on through `src` one after another and wrap at its end. With `src` larger
    /// than the GPU's L2, every launch — every graph replay — reads from device memory.
    pub fn stream_grid_from<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        cursor: &mut DeviceBuffer<u64>,
        bytes: usize,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        let (words, offset) =
            self.stream_from_checked("stream_grid_from", src, cursor, bytes, shape, slots, slot)?;
        self.kernel(Kernel::StreamGrid)
            .buf(src)
            .u64((src.num_bytes() / 16) as u64)
            .u64(words)
            .buf(cursor)
            .buf_at(slots, offset)
            .run(shape)
    }

    /// [`Engine::stream_grid_from`] reading its `bytes` evenly over `pace.ns` of GPU time
    /// instead of as fast as it can, and lasting at least that long (longer where memory cannot
    /// keep the pace). Stands in for a kernel whose bytes and duration are both known: it asks
    /// of the memory system what that kernel asked, spread over its time, which a read sized
    /// only by its duration overstates when other streams' kernels share the bandwidth. See
    /// [`Pace`] for the deep variant.
    #[allow(clippy::too_many_arguments)]
    pub fn stream_paced_from<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        cursor: &mut DeviceBuffer<u64>,
        bytes: usize,
        pace: Pace,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        let (words, offset) =
            self.stream_from_checked("stream_paced_from", src, cursor, bytes, shape, slots, slot)?;
        self.kernel(paced_kernel(pace))
            .buf(src)
            .u64((src.num_bytes() / 16) as u64)
            .u64(words)
            .buf(cursor)
            .u64(pace.ns)
            .buf_at(slots, offset)
            .run(shape)
    }

    /// Registers a thread of the deep paced read ([`Pace::deep`]) holds, as the driver built
    /// it (at most 96, its `__maxnreg__`): a stand-in sized to hold what a recorded block held
    /// needs it.
    pub fn paced_deep_registers(&self) -> Result<u32> {
        let f = self.inner.kernels.get(Kernel::StreamPacedDeep, false)?;
        let regs = f
            .num_regs()
            .map_err(|source| self.inner.core.driver("cuFuncGetAttribute", source))?;
        Ok(u32::try_from(regs).unwrap_or(0))
    }

    /// [`Engine::stream_paced_from`] reading the first `bytes` of `src` every launch, not where a
    /// cursor says: launches that read the same bytes again find them in the L2 once one has
    /// read them (where they fit), as kernels that reread data the step keeps there do.
    pub fn stream_paced<T: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        bytes: usize,
        pace: Pace,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        let words = self.stream_words("stream_paced", src, bytes, bytes, shape)?;
        let offset = self.spin_grid_checked("stream_paced", slots, slot)?;
        self.kernel(paced_kernel(pace))
            .buf(src)
            .u64(words)
            .u64(words)
            .null()
            .u64(pace.ns)
            .buf_at(slots, offset)
            .run(shape)
    }

    /// The checks both cursor-driven reads share: `cursor` is this engine's one word, the read
    /// fits `src` ([`Self::stream_words`]) and `slot` is in `slots`. Returns the read in words
    /// and the slot's offset.
    #[allow(clippy::too_many_arguments)]
    fn stream_from_checked<T: DeviceCopy>(
        &self,
        op: &'static str,
        src: &DeviceBuffer<T>,
        cursor: &DeviceBuffer<u64>,
        bytes: usize,
        shape: LaunchShape,
        slots: &DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<(u64, u64)> {
        let core = &self.inner.core;
        cursor.check_owner(core, op, "cursor")?;
        core.check_len(op, "cursor", 1, cursor.len())?;
        let words = self.stream_words(op, src, bytes, bytes, shape)?;
        let offset = self.spin_grid_checked(op, slots, slot)?;
        Ok((words, offset))
    }

    /// `bytes` as 16-byte words for a `stream_grid` of `shape` reading `src`, checked: `src`
    /// is this engine's and holds at least `need` bytes, whole words, and few enough that the
    /// kernel's split (words × block / blocks, in 64 bits) cannot overflow.
    fn stream_words<T: DeviceCopy>(
        &self,
        op: &'static str,
        src: &DeviceBuffer<T>,
        need: usize,
        bytes: usize,
        shape: LaunchShape,
    ) -> Result<u64> {
        let core = &self.inner.core;
        src.check_owner(core, op, "src")?;
        core.check_len(op, "src (bytes)", need, src.num_bytes())?;
        if bytes % 16 != 0 {
            return Err(Error::InvalidArgument {
                op,
                what: format!("length {bytes} must be a multiple of 16 bytes"),
            });
        }
        let blocks = shape.blocks();
        let words = (bytes / 16) as u64;
        if words.checked_mul(blocks).is_none() {
            return Err(Error::InvalidArgument {
                op,
                what: format!("{bytes} bytes over {blocks} blocks is more than it can split"),
            });
        }
        Ok(words)
    }

    /// The span of the last [`Engine::stream_grid`] launch on a slot's `words`, ns: from its
    /// first block's start to the end of the block that ended last (`None` if the words hold
    /// no such launch).
    pub fn stream_span(words: &[u64]) -> Option<u64> {
        let [_, last_end, span, end] = *words else {
            return None;
        };
        let start = end.checked_sub(span)?;
        (end > 0 && last_end != u64::MAX).then(|| last_end.max(end) - start)
    }

    /// Checks a `spin_grid` slot like the op does; returns its byte offset.
    pub(crate) fn spin_grid_checked(
        &self,
        op: &'static str,
        slots: &DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<u64> {
        let core = &self.inner.core;
        slots.check_owner(core, op, "slots")?;
        let need = slot
            .checked_add(1)
            .and_then(|s| s.checked_mul(Self::SPIN_SLOT_WORDS))
            .unwrap_or(usize::MAX);
        core.check_len(op, "slots", need, slots.len())?;
        Ok((slot * Self::SPIN_SLOT_WORDS * 8) as u64)
    }

    /// The [`Engine::spin_grid`] launch as a [`KernelCall`], checked the same way, to set into
    /// a graph's kernel node ([`crate::Graph::set_kernel_node`]).
    pub fn spin_grid_call(
        &self,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<KernelCall> {
        let offset = self.spin_grid_checked("spin_grid", slots, slot)?;
        shape.validate("spin_grid")?;
        KernelCall::new(Kernel::SpinGridNs, shape, &self.inner.core)
            .arg(Arg::U64(ns))
            .buf_at(slots, offset)
    }

    /// Like [`Engine::spin_grid`], on the slot that `win[win_index]` names among the slots of
    /// `slots`, read from device memory when the kernel runs: a graph captured once records
    /// into whichever slot the host names between replays (device-side parameters). A slot
    /// out of range records nothing.
    pub fn spin_grid_window(
        &self,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        win: &DeviceBuffer<u32>,
        win_index: usize,
    ) -> Result<()> {
        let core = &self.inner.core;
        slots.check_owner(core, "spin_grid_window", "slots")?;
        win.check_owner(core, "spin_grid_window", "win")?;
        core.check_len(
            "spin_grid_window",
            "win",
            win_index.saturating_add(1),
            win.len(),
        )?;
        let count = u32::try_from(slots.len() / Self::SPIN_SLOT_WORDS).unwrap_or(u32::MAX);
        self.kernel(Kernel::SpinGridWindow)
            .u64(ns)
            .buf(slots)
            .u32(count)
            .buf_at(win, (win_index * 4) as u64)
            .run(shape)
    }

    /// Sets the first `bytes` bytes of `dst` to zero on the engine stream (a memset node in a
    /// capture).
    pub fn memset_zero<T: DeviceCopy>(
        &self,
        dst: &mut DeviceBuffer<T>,
        bytes: usize,
    ) -> Result<()> {
        let core = &self.inner.core;
        dst.check_owner(core, "memset_zero", "dst")?;
        core.check_len("memset_zero", "dst (bytes)", bytes, dst.num_bytes())?;
        if bytes == 0 {
            return Ok(());
        }
        let ptr = dst.touch(core)?;
        core.bind()?;
        // SAFETY: the range lies inside dst's allocation, touched for this stream.
        unsafe { result::memset_d8_async(ptr, 0, bytes, core.cu_stream()) }
            .map_err(|source| core.driver("cuMemsetD8Async", source))
    }

    /// The raw `CUfunction` of an engine kernel, for issuing launches outside the engine (e.g.
    /// measuring the driver's own floor). Valid while the engine lives; an error for a kernel
    /// this engine could not load (see [`crate::KernelInitReport::unavailable`]). The build
    /// matches the engine's current PDL setting ([`Engine::set_pdl`]).
    pub fn cu_function(&self, kernel: Kernel) -> Result<sys::CUfunction> {
        let pdl = self.inner.core.pdl();
        Ok(self.inner.kernels.get(kernel, pdl)?.cu_function())
    }

    /// Adds one to `counter[0]` and, when the count reaches a multiple of `every` (0: never),
    /// sets `stop[0]` to 1: a loop step that decides on the device when the loop ends (see
    /// [`Engine::capture_while`]).
    pub fn count_step(
        &self,
        counter: &mut DeviceBuffer<u32>,
        stop: Option<&mut DeviceBuffer<u32>>,
        every: u32,
    ) -> Result<()> {
        let core = &self.inner.core;
        counter.check_owner(core, "count_step", "counter")?;
        core.check_len("count_step", "counter", 1, counter.len())?;
        let launch = self.kernel(Kernel::CountStep).buf(counter);
        let launch = match stop {
            Some(s) => {
                s.check_owner(core, "count_step", "stop")?;
                core.check_len("count_step", "stop", 1, s.len())?;
                launch.buf(s)
            }
            None => launch.null(),
        };
        launch.u32(every).run(LaunchShape::linear(1, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_span_runs_to_the_block_that_ended_last() {
        // Started at 1000 (end 1500 − span 500); a block ended at 1700: 700 ns.
        assert_eq!(Engine::stream_span(&[0, 1700, 500, 1500]), Some(700));
        // No block ended after the highest-index one: its span.
        assert_eq!(Engine::stream_span(&[0, 1400, 500, 1500]), Some(500));
        // Marked (the words read summed to -1.5), never launched, or not a slot: nothing.
        assert_eq!(Engine::stream_span(&[0, u64::MAX, 500, 1500]), None);
        assert_eq!(Engine::stream_span(&[0, 0, 0, 0]), None);
        assert_eq!(Engine::stream_span(&[0, 0, 600, 500]), None);
        assert_eq!(Engine::stream_span(&[1, 2]), None);
    }
}
