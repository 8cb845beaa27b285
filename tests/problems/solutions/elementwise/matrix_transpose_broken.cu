// Broken: sizes the grid with cols / 32 and rows / 32 (rounded down), so the ragged edge tiles are never written.
#include <cuda_runtime.h>

constexpr int TILE = 32;

__global__ void transpose_kernel(const float* __restrict__ a, float* __restrict__ b, size_t rows, size_t cols) {
    __shared__ float tile[TILE][TILE + 1];
    size_t c = blockIdx.x * (size_t)TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        size_t r = blockIdx.y * (size_t)TILE + k;
        tile[k][threadIdx.x] = a[r * cols + c];
    }
    __syncthreads();
    size_t out_c = blockIdx.y * (size_t)TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        size_t out_r = blockIdx.x * (size_t)TILE + k;
        b[out_r * rows + out_c] = tile[threadIdx.x][k];
    }
}

extern "C" void solution(const float* input_a, float* output_b, size_t rows, size_t cols) {
    if (rows < TILE || cols < TILE) return;
    transpose_kernel<<<dim3((unsigned)(cols / TILE), (unsigned)(rows / TILE)), dim3(TILE, 8)>>>(input_a, output_b,
                                                                                                rows, cols);
}
