#include <cuda_runtime.h>

constexpr int TILE = 32;
constexpr int ROWS_PER_PASS = 8;

// One 32×32 tile per block through shared memory, so that both the reads of A and the writes of B are coalesced.
// The extra column keeps the transposed reads of the tile free of bank conflicts.
__global__ void transpose_kernel(const float* __restrict__ a, float* __restrict__ b, size_t rows, size_t cols,
                                 size_t row_tiles) {
    __shared__ float tile[TILE][TILE + 1];
    size_t tile_col = blockIdx.x * (size_t)TILE;
    for (size_t ty = blockIdx.y; ty < row_tiles; ty += gridDim.y) {
        size_t tile_row = ty * TILE;
        size_t c = tile_col + threadIdx.x;
        for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
            size_t r = tile_row + k;
            if (r < rows && c < cols) tile[k][threadIdx.x] = a[r * cols + c];
        }
        __syncthreads();
        // B is cols×rows: its row is A's column, and threadIdx.x runs along A's rows for coalesced writes.
        size_t out_c = tile_row + threadIdx.x;
        for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
            size_t out_r = tile_col + k;
            if (out_r < cols && out_c < rows) b[out_r * rows + out_c] = tile[threadIdx.x][k];
        }
        __syncthreads();
    }
}

extern "C" void solution(const float* input_a, float* output_b, size_t rows, size_t cols) {
    if (rows == 0 || cols == 0) return;
    size_t col_tiles = (cols + TILE - 1) / TILE;
    size_t row_tiles = (rows + TILE - 1) / TILE;
    unsigned grid_y = (unsigned)(row_tiles < 65535 ? row_tiles : 65535);  // the kernel loops over the rest
    transpose_kernel<<<dim3((unsigned)col_tiles, grid_y), dim3(TILE, ROWS_PER_PASS)>>>(input_a, output_b, rows, cols,
                                                                                      row_tiles);
}
