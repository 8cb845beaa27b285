// Aborts the kernel with __trap().
#include <cuda_runtime.h>

__global__ void trapped() { __trap(); }

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    trapped<<<1, 1>>>();
}
