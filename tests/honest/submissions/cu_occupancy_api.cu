// Honest: asks the occupancy API for a block size on its first call.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

static unsigned blocks_for(size_t n) {
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

static int block_size = 0;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    if (block_size == 0) {
        int min_grid = 0;
        cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, add_kernel, 0, 0);
    }
    size_t blocks = (n + block_size - 1) / block_size;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    add_kernel<<<(unsigned)blocks, block_size>>>(input_a, input_b, output_c, n);
}
