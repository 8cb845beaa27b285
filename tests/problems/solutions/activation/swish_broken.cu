// Broken: indexes rows with a stride of n instead of m, which is right only for square matrices.
#include <cuda_runtime.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n, size_t m) {
    size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (col >= m) return;
    for (size_t row = blockIdx.y; row < n; row += gridDim.y) {
        size_t i = row * n + col;
        if (i < n * m) {
            float v = x[i];
            y[i] = v / (1.0f + expf(-v));
        }
    }
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    if (n == 0 || m == 0) return;
    size_t rows = n < 65535 ? n : 65535;
    swish_kernel<<<dim3((unsigned)((m + 255) / 256), (unsigned)rows), 256>>>(input, output, n, m);
}
