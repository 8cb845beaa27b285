// C = A * B^T with both operands MXFP8 (E4M3): a 32x32 shared-memory tiled GEMM that decodes E4M3 and applies
// the E8M0 block scale (read from the swizzled 128x4 layout) while loading each tile, accumulating in float32.
// K steps of 32 match the MX blocks.
#include <cstdint>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#define TILE 32

// The byte of the scale of (row, block) in cuBLAS's swizzled 128x4 layout: 512-byte tiles of 128 rows x 4 blocks,
// row-major over the padded tile grid; inside a tile, row r and block b lie at (r % 32) * 16 + (r / 32 % 4) * 4 + b.
__device__ __forceinline__ size_t swizzled(size_t row, size_t blk, size_t blocks) {
    size_t tiles_per_row = (blocks + 3) / 4;
    return ((row / 128) * tiles_per_row + blk / 4) * 512 + (row % 32) * 16 + ((row / 32) % 4) * 4 + (blk % 4);
}

__device__ __forceinline__ float mxfp8_at(const uint8_t* q, const uint8_t* scale, size_t row, size_t col, size_t k) {
    __nv_fp8_e4m3 v;
    v.__x = q[row * k + col];
    return float(v) * ldexpf(1.0f, (int)scale[swizzled(row, col / 32, k / 32)] - 127);
}

__global__ void mxfp8_gemm_kernel(const uint8_t* __restrict__ q_a, const uint8_t* __restrict__ scale_a,
                                  const uint8_t* __restrict__ q_b, const uint8_t* __restrict__ scale_b,
                                  float* __restrict__ c, size_t m, size_t n, size_t k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    size_t b_row = blockIdx.x * (size_t)TILE + threadIdx.y;  // the row of B this thread loads
    float acc = 0.0f;
    for (size_t t = 0; t < k; t += TILE) {
        size_t kk = t + threadIdx.x;
        as[threadIdx.y][threadIdx.x] = (row < m && kk < k) ? mxfp8_at(q_a, scale_a, row, kk, k) : 0.0f;
        // Stored transposed: bs[i][j] = B[tile col j][k step i].
        bs[threadIdx.x][threadIdx.y] = (b_row < n && kk < k) ? mxfp8_at(q_b, scale_b, b_row, kk, k) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

extern "C" void solution(const uint8_t* q_a, const uint8_t* scale_a, const uint8_t* q_b, const uint8_t* scale_b,
                         float* c, size_t m, size_t n, size_t k) {
    if (m == 0 || n == 0) return;
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    mxfp8_gemm_kernel<<<grid, block>>>(q_a, scale_a, q_b, scale_b, c, m, n, k);
}
