// A tiled integer GEMM: both operands are read along K (B is N×K), staged in shared memory as int, and
// accumulated exactly in int32.
#include <cstdint>
#include <cuda_runtime.h>

#define TILE 32

__global__ void int8_gemm_kernel(const int8_t* __restrict__ a, const int8_t* __restrict__ b, int* __restrict__ c,
                                 size_t m, size_t n, size_t k) {
    __shared__ int as[TILE][TILE + 1];
    __shared__ int bs[TILE][TILE + 1];  // bs[kk][j] = B[col0 + j][t + kk]
    const size_t row0 = blockIdx.y * (size_t)TILE, col0 = blockIdx.x * (size_t)TILE;
    const size_t row = row0 + threadIdx.y, col = col0 + threadIdx.x;
    const size_t brow = col0 + threadIdx.y;
    int acc = 0;
    for (size_t t = 0; t < k; t += TILE) {
        const size_t kk = t + threadIdx.x;
        as[threadIdx.y][threadIdx.x] = (row < m && kk < k) ? (int)a[row * k + kk] : 0;
        bs[threadIdx.x][threadIdx.y] = (brow < n && kk < k) ? (int)b[brow * k + kk] : 0;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

extern "C" void solution(const int8_t* input_a, const int8_t* input_b, int* output_c, size_t m, size_t n, size_t k) {
    if (m == 0 || n == 0) return;
    const dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    int8_gemm_kernel<<<grid, dim3(TILE, TILE)>>>(input_a, input_b, output_c, m, n, k);
}
