// One thread per element of a 2-D grid-stride loop: row i of B is scaled by diagonal_a[i], read once per row.
#include <cuda_runtime.h>

__global__ void diagonal_matmul_kernel(const float* __restrict__ d, const float* __restrict__ b,
                                       float* __restrict__ c, size_t n, size_t m) {
    for (size_t row = blockIdx.y; row < n; row += gridDim.y) {
        const float scale = d[row];
        const float* src = b + row * m;
        float* dst = c + row * m;
        for (size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x; col < m; col += (size_t)gridDim.x * blockDim.x)
            dst[col] = scale * src[col];
    }
}

extern "C" void solution(const float* diagonal_a, const float* input_b, float* output_c, size_t n, size_t m) {
    if (n == 0 || m == 0) return;
    const unsigned threads = 256;
    size_t col_blocks = (m + threads - 1) / threads;
    if (col_blocks > 64) col_blocks = 64;
    const size_t row_blocks = n < 65535 ? n : 65535;
    diagonal_matmul_kernel<<<dim3((unsigned)col_blocks, (unsigned)row_blocks), threads>>>(diagonal_a, input_b,
                                                                                         output_c, n, m);
}
