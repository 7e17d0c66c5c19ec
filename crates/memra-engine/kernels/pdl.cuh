// Programmatic dependent launch (PDL, sm_90 and later). Every engine kernel starts with
// pdl_enter(): it first waits until the kernel it depends on has finished and its writes are
// visible (griddepcontrol.wait), and only then lets the next kernel on the stream be launched
// (griddepcontrol.launch_dependents), so that kernel's launch overlaps this one's run. Both are
// no-ops for a kernel not launched as a programmatic dependent, and compile to nothing before
// sm_90. No engine kernel touches memory before the wait, so PDL never lets one read or write
// ahead of its predecessor.
__device__ __forceinline__ void pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
