// Broken: takes n for the element count, so only the first n of the n·n elements are scaled.
#include <cuda_runtime.h>

__global__ void scale_kernel(const float* __restrict__ a, float s, float* __restrict__ b, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        b[i] = s * a[i];
    }
}

extern "C" void solution(const float* input_matrix, float scalar, float* output_matrix, size_t n) {
    if (n == 0) return;
    size_t blocks = (n + 255) / 256;
    scale_kernel<<<(unsigned)blocks, 256>>>(input_matrix, scalar, output_matrix, n);
}
