// A conditional WHILE graph with nothing of memra-engine in it, to tell a defect of the engine
// from a limit of compute-sanitizer: one body kernel counts to 10 and sets the condition.
//   nvcc -arch=sm_90 -o /tmp/while_repro scripts/while_memcheck_repro.cu -lcuda
//   /tmp/while_repro                                   # expect "iterations 10"
//   compute-sanitizer --tool memcheck /tmp/while_repro # does the sanitizer run it?
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void body(cudaGraphConditionalHandle h, unsigned* state, unsigned limit) {
    unsigned done = state[0] + 1;
    bool more = done < limit;
    state[0] = more ? done : 0;
    if (!more) state[1] = done;
    cudaGraphSetConditional(h, more ? 1u : 0u);
}

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("%s failed: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main() {
    unsigned* state;
    CHECK(cudaMalloc(&state, 2 * sizeof(unsigned)));
    CHECK(cudaMemset(state, 0, 2 * sizeof(unsigned)));
    CHECK(cudaDeviceSynchronize());
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = h;
    p.conditional.type = cudaGraphCondTypeWhile;
    p.conditional.size = 1;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &p));
    cudaGraph_t bg = p.conditional.phGraph_out[0];
    CHECK(cudaStreamBeginCaptureToGraph(s, bg, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    body<<<1, 1, 0, s>>>(h, state, 10);
    CHECK(cudaStreamEndCapture(s, &bg));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < 3; i++) CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned host[2];
    CHECK(cudaMemcpy(host, state, sizeof host, cudaMemcpyDeviceToHost));
    printf("iterations %u\n", host[1]);
    return host[1] == 10 ? 0 : 1;
}
