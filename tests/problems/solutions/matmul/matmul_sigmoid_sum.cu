// A tiled GEMM whose epilogue takes the sigmoid and sums the block's 32×32 tile in shared memory (a tree);
// one atomicAdd per block then adds the tile sums into the zeroed output. The product never reaches memory,
// and no float accumulator ever sums more than a few thousand similar values in sequence.
#include <cuda_runtime.h>

#define TILE 32

__global__ void matmul_sigmoid_sum_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ out, size_t m, size_t n, size_t k) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float bs[TILE][TILE + 1];
    __shared__ float partial[TILE * TILE];
    const size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    float acc = 0.0f;
    for (size_t t = 0; t < k; t += TILE) {
        const size_t ak = t + threadIdx.x, bk = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? a[row * k + ak] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (bk < k && col < n) ? b[bk * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    const unsigned tid = threadIdx.y * TILE + threadIdx.x;
    partial[tid] = (row < m && col < n) ? 1.0f / (1.0f + expf(-acc)) : 0.0f;
    __syncthreads();
    for (unsigned stride = TILE * TILE / 2; stride > 0; stride >>= 1) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, partial[0]);
}

extern "C" void solution(const float* A, const float* B, float* output, size_t M, size_t N, size_t K) {
    cudaMemsetAsync(output, 0, sizeof(float), 0);
    if (M == 0 || N == 0) return;
    const dim3 grid((unsigned)((N + TILE - 1) / TILE), (unsigned)((M + TILE - 1) / TILE));
    matmul_sigmoid_sum_kernel<<<grid, dim3(TILE, TILE)>>>(A, B, output, M, N, K);
}
