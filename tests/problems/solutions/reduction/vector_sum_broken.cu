// Broken: adds the block sums into the output without zeroing it first (it still holds whatever was there).
#include <cuda_runtime.h>

__global__ void sum_kernel(const float* __restrict__ x, float* __restrict__ out, size_t n) {
    __shared__ float partial[32];
    float acc = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc += x[i];
    for (int d = 16; d > 0; d >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, d);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (int)(blockDim.x >> 5) ? partial[lane] : 0.0f;
        for (int d = 16; d > 0; d >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, d);
        if (lane == 0) atomicAdd(out, acc);
    }
}

extern "C" void solution(const float* input_x, float* output_sum, size_t n) {
    size_t blocks = (n + 255) / 256;
    if (blocks > 1024) blocks = 1024;
    if (blocks == 0) return;
    sum_kernel<<<(unsigned)blocks, 256>>>(input_x, output_sum, n);
}
