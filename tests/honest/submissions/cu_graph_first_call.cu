// Honest: captures a CUDA graph per set of buffers on first use, then launches it on the default stream.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

static unsigned blocks_for(size_t n) {
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

#include <map>
#include <tuple>

static std::map<std::tuple<const float*, const float*, float*, size_t>, cudaGraphExec_t> graphs;
static cudaStream_t capture_stream = nullptr;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    auto key = std::make_tuple(input_a, input_b, output_c, n);
    auto found = graphs.find(key);
    if (found == graphs.end()) {
        if (capture_stream == nullptr) cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal);
        add_kernel<<<blocks_for(n), 256, 0, capture_stream>>>(input_a, input_b, output_c, n);
        cudaStreamEndCapture(capture_stream, &graph);
        cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        found = graphs.emplace(key, exec).first;
    }
    cudaGraphLaunch(found->second, 0);
}
