// The N×M×K tensor is one (N·M)×K row-major matrix: a tiled GEMM with it and B (K×L). Row tiles run along
// grid x, which has room for 2^31 - 1 of them.
#include <cuda_runtime.h>

#define TILE 32

__global__ void matmul_3d_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 size_t rows, size_t cols, size_t inner) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float bs[TILE][TILE + 1];
    const size_t row = blockIdx.x * (size_t)TILE + threadIdx.y;
    const size_t col = blockIdx.y * (size_t)TILE + threadIdx.x;
    float acc = 0.0f;
    for (size_t t = 0; t < inner; t += TILE) {
        const size_t ak = t + threadIdx.x, bk = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < rows && ak < inner) ? a[row * inner + ak] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (bk < inner && col < cols) ? b[bk * cols + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < rows && col < cols) c[row * cols + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t n, size_t m, size_t k, size_t l) {
    const size_t rows = n * m;
    if (rows == 0 || l == 0) return;
    const dim3 grid((unsigned)((rows + TILE - 1) / TILE), (unsigned)((l + TILE - 1) / TILE));
    matmul_3d_kernel<<<grid, dim3(TILE, TILE)>>>(A, B, C, rows, l, k);
}
