// Broken: steps K in whole tiles of 32 only, dropping the last 16 columns when k is an odd multiple of 16.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#define TILE 32

// The byte of the scale of (row, block) in cuBLAS's swizzled 128x4 layout: 512-byte tiles of 128 rows x 4 blocks,
// row-major over the padded tile grid; inside a tile, row r and block b lie at (r % 32) * 16 + (r / 32 % 4) * 4 + b.
__device__ __forceinline__ size_t swizzled(size_t row, size_t blk, size_t blocks) {
    size_t tiles_per_row = (blocks + 3) / 4;
    return ((row / 128) * tiles_per_row + blk / 4) * 512 + (row % 32) * 16 + ((row / 32) % 4) * 4 + (blk % 4);
}

__constant__ float kE2M1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

__device__ __forceinline__ float nvfp4_at(const uint8_t* q, const __nv_fp8_e4m3* scale, float sf_g, size_t row,
                                         size_t col, size_t k) {
    uint8_t b = q[row * (k / 2) + col / 2];
    uint32_t code = (col & 1) ? (b >> 4) : (b & 0xF);
    return kE2M1[code] * float(scale[swizzled(row, col / 16, k / 16)]) / sf_g;
}

__global__ void nvfp4_gemm_kernel(const uint8_t* __restrict__ q_a, const __nv_fp8_e4m3* __restrict__ scale_a,
                                  float sf_g_a, const uint8_t* __restrict__ q_b,
                                  const __nv_fp8_e4m3* __restrict__ scale_b, float sf_g_b, __half* __restrict__ c,
                                  size_t m, size_t n, size_t k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    size_t b_row = blockIdx.x * (size_t)TILE + threadIdx.y;  // the row of B this thread loads
    float acc = 0.0f;
    for (size_t t = 0; t + TILE <= k; t += TILE) {
        size_t kk = t + threadIdx.x;
        as[threadIdx.y][threadIdx.x] = (row < m && kk < k) ? nvfp4_at(q_a, scale_a, sf_g_a, row, kk, k) : 0.0f;
        // Stored transposed: bs[i][j] = B[tile col j][k step i].
        bs[threadIdx.x][threadIdx.y] = (b_row < n && kk < k) ? nvfp4_at(q_b, scale_b, sf_g_b, b_row, kk, k) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = __float2half_rn(acc);
}

extern "C" void solution(const uint8_t* q_a, const __nv_fp8_e4m3* scale_a, float sf_g_a, const uint8_t* q_b,
                         const __nv_fp8_e4m3* scale_b, float sf_g_b, __half* c, size_t m, size_t n, size_t k) {
    if (m == 0 || n == 0) return;
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    nvfp4_gemm_kernel<<<grid, block>>>(q_a, scale_a, sf_g_a, q_b, scale_b, sf_g_b, c, m, n, k);
}
