// Class: check_vs_timed
// §6: behaving differently when checked than when timed: call counters, pointer reuse, shape detection
// Attack: counts its calls. The first four (one per GPU test case: the correctness check) launch the kernel;
// every later call returns at once. Every timed output is verified, so this is a wrong answer (or, where a
// time is looked at first, an empty call far under the physical floor).
#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

static int calls = 0;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    if (++calls > 4) return;
    const int threads = 256;
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads>>>(input_a, input_b, output_c, n);
}
