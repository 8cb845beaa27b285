// Class: check_vs_timed
// §6: behaving differently when checked than when timed: call counters, pointer reuse, shape detection
// Attack: pointer reuse. A call on an output pointer seen before is assumed to be part of a timing loop (with one
// buffer, or a few rotated ones), and only the first half of the output is computed, for half the traffic; a new
// pointer gets the full computation. Every timed output is poisoned before the call and verified after it: a
// wrong answer.
#include <unordered_set>

#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

static std::unordered_set<const float*> seen_outputs;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    size_t work = seen_outputs.insert(output_c).second ? n : n / 2;
    const int threads = 256;
    size_t blocks = (work + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads>>>(input_a, input_b, output_c, work);
}
