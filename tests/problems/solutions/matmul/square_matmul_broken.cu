// Broken: the K loop stops at the last whole tile, so the last n % 32 terms of every sum are dropped.
#include <cuda_runtime.h>

#define TILE 32

__global__ void square_matmul_kernel(const float* a, const float* b, float* c, size_t n) {
    __shared__ float as[TILE][TILE + 1];
    __shared__ float bs[TILE][TILE + 1];
    const size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    float acc = 0.0f;
    for (size_t t = 0; t + TILE <= n; t += TILE) {
        as[threadIdx.y][threadIdx.x] = row < n ? a[row * n + t + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = col < n ? b[(t + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const unsigned tiles = (unsigned)((n + TILE - 1) / TILE);
    square_matmul_kernel<<<dim3(tiles, tiles), dim3(TILE, TILE)>>>(input_a, input_b, output_c, n);
}
