// Honest, host-bound: records an event after its launch and waits for it with cudaEventSynchronize.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

static unsigned blocks_for(size_t n) {
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    static cudaEvent_t done = nullptr;
    if (done == nullptr) cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    add_kernel<<<blocks_for(n), 256>>>(input_a, input_b, output_c, n);
    cudaEventRecord(done, 0);
    cudaEventSynchronize(done);
}
