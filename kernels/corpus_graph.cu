// A CUDA graph of two kernel launches, captured from a stream and replayed 3 times
// (cudaGraphLaunch -> cuGraphLaunch): what does a graph replay submit?
// Usage: corpus_graph [TRUTH.json]. Exit 0 when the result is right.
#ifndef __CUDACC_RTC__   // NVRTC compiles the kernels only
#include "corpus_common.h"
#endif

__global__ void scale_add(float *x, int n, float a, float b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + b;
}

#ifndef __CUDACC_RTC__   // host side: nvcc only
int main(int argc, char **argv) {
    const int n = 1 << 16, replays = 3;
    float *x;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMemset(x, 0, n * sizeof(float)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    dim3 grid(n / 256), block(256);
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    scale_add<<<grid, block, 0, s>>>(x, n, 2.0f, 1.0f);
    scale_add<<<grid, block, 0, s>>>(x, n, 0.5f, 1.0f);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < replays; r++) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    float h[4];
    CK(cudaMemcpy(h, x + n - 4, sizeof h, cudaMemcpyDeviceToHost));
    // x -> (2x + 1) / 2 + 1 = x + 1.5 per replay: 4.5 after three
    int ok = h[0] == 4.5f && h[3] == 4.5f;
    FILE *f = truth_open(argc, argv);
    int first = 1;
    fprintf(f, "\"kernels\": {"); truth_kernel(f, "scale_add", (const void *)scale_add, &first);
    fprintf(f, "}, \"graph_nodes\": [");
    first = 1;
    truth_launch(f, "scale_add", grid, block, 0, &first);
    truth_launch(f, "scale_add", grid, block, 0, &first);
    fprintf(f, "], \"node_args\": [{\"n\": %d, \"a\": 2.0, \"b\": 1.0}, {\"n\": %d, \"a\": 0.5, \"b\": 1.0}], "
            "\"replays\": %d, \"result\": %g, \"ok\": %s}\n", n, n, replays, h[0], ok ? "true" : "false");
    fclose(f);
    printf("graph: %d replays, x = %g (%s)\n", replays, h[0], ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
#endif
