// A tiled GEMM per batch entry, the batch along grid z (looped if it has more than 65535 entries).
#include <cuda_runtime.h>

#define TILE 32

__global__ void batched_matmul_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                      size_t batch, size_t m, size_t n, size_t k) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float bs[TILE][TILE + 1];
    const size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    for (size_t entry = blockIdx.z; entry < batch; entry += gridDim.z) {  // uniform per block
        const float* a_e = a + entry * m * k;
        const float* b_e = b + entry * k * n;
        float acc = 0.0f;
        for (size_t t = 0; t < k; t += TILE) {
            const size_t ak = t + threadIdx.x, bk = t + threadIdx.y;
            as[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? a_e[row * k + ak] : 0.0f;
            bs[threadIdx.y][threadIdx.x] = (bk < k && col < n) ? b_e[bk * n + col] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
            __syncthreads();
        }
        if (row < m && col < n) c[entry * m * n + row * n + col] = acc;
    }
}

extern "C" void solution(const float* A, const float* B, float* C, size_t batch, size_t m, size_t n, size_t k) {
    if (batch == 0 || m == 0 || n == 0) return;
    const size_t z = batch < 65535 ? batch : 65535;
    const dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE), (unsigned)z);
    batched_matmul_kernel<<<grid, dim3(TILE, TILE)>>>(A, B, C, batch, m, n, k);
}
