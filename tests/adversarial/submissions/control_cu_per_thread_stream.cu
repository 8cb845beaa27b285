// Class: control (honest, no cheat)
// Launches on the per-thread default stream (cudaStreamPerThread in the launch: competitors cannot pass
// --default-stream per-thread). That stream synchronises with the legacy default stream, so the work is
// inside the timed window and this must pass.
#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const int threads = 256;
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads, 0, cudaStreamPerThread>>>(input_a, input_b, output_c, n);
}
