// Holds its stream until the host lets it go (nvbench's blocking kernel): one thread polls a
// release word in mapped page-locked host memory until the host writes a non-zero value. After
// `timeout_ns` of the GPU's global timer it gives up and writes 1 into `timed_out` (also mapped
// host memory), so a host that never releases cannot hang the stream, and the host can tell a
// hold that lasted from one that ran out.
extern "C" __global__ void hold_until_released(const unsigned* release, unsigned* timed_out,
                                               unsigned long long timeout_ns) {
    pdl_enter();
    const volatile unsigned* r = release;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*r == 0u) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *(volatile unsigned*)timed_out = 1u;
            return;
        }
        __nanosleep(500);
    }
}
