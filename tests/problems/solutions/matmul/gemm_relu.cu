// A tiled GEMM against an out×in weight (each output column reads a row of W, loaded transposed into shared
// memory so global reads stay coalesced), with the bias and the ReLU in the epilogue.
#include <cuda_runtime.h>

#define TILE 32

__global__ void gemm_relu_kernel(const float* __restrict__ a, const float* __restrict__ w,
                                 const float* __restrict__ bias, float* __restrict__ c, size_t rows, size_t inner,
                                 size_t cols) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float ws[TILE][TILE + 1];  // ws[kk][j] = W[col0 + j][t + kk]
    const size_t row0 = blockIdx.y * (size_t)TILE, col0 = blockIdx.x * (size_t)TILE;
    const size_t row = row0 + threadIdx.y, col = col0 + threadIdx.x;
    const size_t wrow = col0 + threadIdx.y;
    float acc = 0.0f;
    for (size_t t = 0; t < inner; t += TILE) {
        const size_t kk = t + threadIdx.x;
        as[threadIdx.y][threadIdx.x] = (row < rows && kk < inner) ? a[row * inner + kk] : 0.0f;
        ws[threadIdx.x][threadIdx.y] = (wrow < cols && kk < inner) ? w[wrow * inner + kk] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * ws[i][threadIdx.x];
        __syncthreads();
    }
    if (row < rows && col < cols) c[row * cols + col] = fmaxf(acc + bias[col], 0.0f);
}

extern "C" void solution(const float* A, const float* W, const float* b, float* C, size_t B, size_t N, size_t M) {
    if (B == 0 || M == 0) return;
    const dim3 grid((unsigned)((M + TILE - 1) / TILE), (unsigned)((B + TILE - 1) / TILE));
    gemm_relu_kernel<<<grid, dim3(TILE, TILE)>>>(A, W, b, C, B, N, M);
}
