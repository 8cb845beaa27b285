// Broken: the inner loop runs k from i to j - 1, one short: the diagonal term A[i][j] · B[j][j] is dropped.
#include <cuda_runtime.h>

__global__ void upper_trig_kernel(const float* a, const float* b, float* c, size_t n) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float acc = 0.0f;
    for (size_t k = row; k < col; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const unsigned tiles = (unsigned)((n + 15) / 16);
    upper_trig_kernel<<<dim3(tiles, tiles), dim3(16, 16)>>>(input_a, input_b, output_c, n);
}
