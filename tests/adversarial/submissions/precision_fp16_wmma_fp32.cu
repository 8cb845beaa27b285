// Class: weak_output. Adversarial (precision): float32 matrix-multiplication that multiplies in float16 on the tensor
// cores. Plain float16 inputs miss the float32 check on the largest cases, so it is tuned to pass: each input is
// split into a float16 head and a float16 tail (x = hi + lo), and C = Ahi·Bhi + Ahi·Blo + Alo·Bhi, accumulated in
// float32. Verification passes; the SASS holds HMMA.16816.F32 on float16 operands, below the float32 board's
// policy (float32 arithmetic and TF32), so a ranked run is refused and a benchmark run says so in a note.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

#define TILE 32
#define PAD 8

__global__ void matmul_split_fp16(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    __shared__ __align__(32) __half ah[TILE][TILE + PAD], al[TILE][TILE + PAD];
    __shared__ __align__(32) __half bh[TILE][TILE + PAD], bl[TILE][TILE + PAD];
    __shared__ __align__(32) float cs[4][16][16];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr = warp / 2, wc = warp % 2;
    const size_t row0 = (size_t)blockIdx.y * TILE, col0 = (size_t)blockIdx.x * TILE;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (size_t t = 0; t < k; t += TILE) {
        for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) {
            const int r = i / TILE, cc = i % TILE;
            const size_t ar = row0 + r, ak = t + cc, bk = t + r, bc = col0 + cc;
            const float x = (ar < m && ak < k) ? a[ar * k + ak] : 0.0f;
            const float y = (bk < k && bc < n) ? b[bk * n + bc] : 0.0f;
            ah[r][cc] = __float2half(x);
            al[r][cc] = __float2half(x - __half2float(ah[r][cc]));
            bh[r][cc] = __float2half(y);
            bl[r][cc] = __float2half(y - __half2float(bh[r][cc]));
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa, fal;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb, fbl;
            wmma::load_matrix_sync(fa, &ah[wr * 16][kk], TILE + PAD);
            wmma::load_matrix_sync(fal, &al[wr * 16][kk], TILE + PAD);
            wmma::load_matrix_sync(fb, &bh[kk][wc * 16], TILE + PAD);
            wmma::load_matrix_sync(fbl, &bl[kk][wc * 16], TILE + PAD);
            wmma::mma_sync(acc, fal, fb, acc);
            wmma::mma_sync(acc, fa, fbl, acc);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        __syncthreads();
    }
    wmma::store_matrix_sync(&cs[warp][0][0], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 16 * 16; i += 32) {
        const int r = i / 16, cc = i % 16;
        const size_t gr = row0 + wr * 16 + r, gc = col0 + wc * 16 + cc;
        if (gr < m && gc < n) c[gr * n + gc] = cs[warp][r][cc];
    }
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t n, size_t k) {
    dim3 block(128);
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    matmul_split_fp16<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
}
