// A correct CUDA matrix transpose through a 32x32 shared-memory tile: each block reads a tile of A with
// coalesced loads and writes it to B with coalesced stores. The tile has one padding column so that the
// column-wise reads of shared memory hit 32 different banks. rows and cols need not be multiples of 32.
#include <cuda_runtime.h>

constexpr int TILE = 32;
constexpr int ROWS_PER_PASS = 8;  // a block of 32x8 threads covers its 32x32 tile in four passes

__global__ void transpose_kernel(const float* a, float* b, size_t rows, size_t cols) {
    __shared__ float tile[TILE][TILE + 1];
    size_t x = (size_t)blockIdx.x * TILE + threadIdx.x;  // column of A
    size_t y0 = (size_t)blockIdx.y * TILE;               // first row of A in this tile
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        size_t y = y0 + j;
        if (x < cols && y < rows) tile[j][threadIdx.x] = a[y * cols + x];
    }
    __syncthreads();
    size_t bx = y0 + threadIdx.x;                        // column of B (a row of A)
    size_t by0 = (size_t)blockIdx.x * TILE;              // first row of B (a column of A)
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER_PASS) {
        size_t by = by0 + j;
        if (bx < rows && by < cols) b[by * rows + bx] = tile[threadIdx.x][j];
    }
}

extern "C" void solution(const float* input_a, float* output_b, size_t rows, size_t cols) {
    dim3 block(TILE, ROWS_PER_PASS);
    dim3 grid((unsigned)((cols + TILE - 1) / TILE), (unsigned)((rows + TILE - 1) / TILE));
    transpose_kernel<<<grid, block>>>(input_a, output_b, rows, cols);
}
