// Broken: a 2-d grid of 32-column tiles sized with m / 32 (rounded down), so the last m % 32 columns stay unwritten.
#include <cuda_runtime.h>

__global__ void sigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n, size_t m) {
    size_t col = blockIdx.x * (size_t)32 + threadIdx.x;
    for (size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y; row < n; row += (size_t)gridDim.y * blockDim.y) {
        if (col < m) y[row * m + col] = 1.0f / (1.0f + expf(-x[row * m + col]));
    }
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    size_t rows = (n + 7) / 8;
    if (rows > 65535) rows = 65535;
    if (m / 32 == 0 || n == 0) return;
    sigmoid_kernel<<<dim3((unsigned)(m / 32), (unsigned)rows), dim3(32, 8)>>>(input, output, n, m);
}
