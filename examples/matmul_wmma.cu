// A correct float16 matrix-multiplication on the tensor cores, through the WMMA API (`arena submit matmul
// examples/matmul_wmma.cu --dtype float16`). Each block of four warps computes a 32×32 tile of C, each warp one
// 16×16 fragment accumulated in float32; on an H100 every `mma_sync` is two HMMA.16816 instructions. Tiles of A and
// B are staged in shared memory, zero-padded past the M, N and K tails, so any size works.
// A is M×K, B is K×N, C is M×N, all row-major; the sizes come in Tensara's order (m, n, k).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

#define TILE 32
// Eight halves of padding keep each row 16-byte aligned, as load_matrix_sync needs, and spread the banks.
#define PAD 8

__global__ void matmul_wmma(const __half* a, const __half* b, __half* c, size_t m, size_t n, size_t k) {
    __shared__ __align__(32) __half as[TILE][TILE + PAD];
    __shared__ __align__(32) __half bs[TILE][TILE + PAD];
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
            as[r][cc] = (ar < m && ak < k) ? a[ar * k + ak] : __float2half(0.0f);
            bs[r][cc] = (bk < k && bc < n) ? b[bk * n + bc] : __float2half(0.0f);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
            wmma::load_matrix_sync(fa, &as[wr * 16][kk], TILE + PAD);
            wmma::load_matrix_sync(fb, &bs[kk][wc * 16], TILE + PAD);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        __syncthreads();
    }
    wmma::store_matrix_sync(&cs[warp][0][0], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 16 * 16; i += 32) {
        const int r = i / 16, cc = i % 16;
        const size_t gr = row0 + wr * 16 + r, gc = col0 + wc * 16 + cc;
        if (gr < m && gc < n) c[gr * n + gc] = __float2half(cs[warp][r][cc]);
    }
}

extern "C" void solution(const __half* input_a, const __half* input_b, __half* output_c, size_t m, size_t n,
                         size_t k) {
    dim3 block(128);
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    matmul_wmma<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
}
