// Class: weak_output. Adversarial (precision): bfloat16 matrix-multiplication whose inputs pass through FP8. Each value
// is rounded to an E4M3 head and an E4M3 tail (x ≈ hi + lo, so the bfloat16 check still passes), and the products
// hi·hi + hi·lo + lo·hi run on the float16 tensor cores. The SASS holds the F2FP conversions into E4M3, below the
// bfloat16 board's policy, so a ranked run is refused and a benchmark run says so in a note.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

#define TILE 32
#define PAD 8

__device__ __forceinline__ void split_fp8(float x, __half* hi, __half* lo) {
    const __nv_fp8_e4m3 h(x);
    const float head = float(h);
    const __nv_fp8_e4m3 l(x - head);
    *hi = __float2half(head);
    *lo = __float2half(float(l));
}

__global__ void matmul_fp8(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, size_t m, size_t n,
                           size_t k) {
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
            const float x = (ar < m && ak < k) ? __bfloat162float(a[ar * k + ak]) : 0.0f;
            const float y = (bk < k && bc < n) ? __bfloat162float(b[bk * n + bc]) : 0.0f;
            split_fp8(x, &ah[r][cc], &al[r][cc]);
            split_fp8(y, &bh[r][cc], &bl[r][cc]);
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
        if (gr < m && gc < n) c[gr * n + gc] = __float2bfloat16(cs[warp][r][cc]);
    }
}

extern "C" void solution(const __nv_bfloat16* input_a, const __nv_bfloat16* input_b, __nv_bfloat16* output_c,
                         size_t m, size_t n, size_t k) {
    dim3 block(128);
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    matmul_fp8<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
}
