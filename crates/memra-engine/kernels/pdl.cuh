// Programmatic dependent launch (PDL, sm_90 and later). Every engine kernel starts with
// pdl_enter(). In the build the engine uses for PDL launches (MEMRA_PDL defined) it first waits until the kernel it depends on has finished and its writes are
// visible (griddepcontrol.wait), and only then lets the next kernel on the stream be launched
// (griddepcontrol.launch_dependents), so that kernel's launch overlaps this one's run. In the
// plain build, and before sm_90, it is empty: the wait is not free even for a kernel launched
// without PDL (every block of a wide grid pays it). No engine kernel touches memory before the wait, so PDL never lets one read or write
// ahead of its predecessor.
__device__ __forceinline__ void pdl_enter() {
#if defined(MEMRA_PDL) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
