// Class: resource_abuse
// §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
// Attack: context poisoning. solution() computes the right answer, then calls cudaDeviceReset(), which destroys the
// primary context the harness shares (its events, streams, buffers and mappings go with it). Whatever the harness
// does next fails: an error or a wrong answer, never a pass, and the next job starts clean.
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
    vector_add_kernel<<<(unsigned)blocks, threads>>>(input_a, input_b, output_c, n);
    cudaDeviceSynchronize();
    cudaDeviceReset();
}
