// Three launches on the default stream: clear a device accumulator, add every block's sum of squares to it (in
// double, so the order of the atomic adds does not matter), then scale every element by 1/sqrt(total).
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// The sum of v over the block, returned to every thread. blockDim.x must be a multiple of 32.
__device__ float block_sum(float v) {
    __shared__ float warp_totals[32];
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? warp_totals[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();  // the next call may overwrite warp_totals
    return v;
}

__device__ double g_sumsq;

__global__ void clear_kernel() { g_sumsq = 0.0; }

__global__ void sumsq_kernel(const float* __restrict__ x, size_t size) {
    float acc = 0.0f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < size; i += stride) acc += x[i] * x[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) atomicAdd(&g_sumsq, (double)acc);
}

__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ y, size_t size) {
    const float inv = (float)(1.0 / sqrt(g_sumsq));
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < size; i += stride) y[i] = x[i] * inv;
}

extern "C" void solution(const float* X, float* Y, size_t size) {
    if (size == 0) return;
    size_t blocks = (size + 255) / 256;
    if (blocks > 2048) blocks = 2048;
    clear_kernel<<<1, 1>>>();
    sumsq_kernel<<<(unsigned)blocks, 256>>>(X, size);
    scale_kernel<<<(unsigned)blocks, 256>>>(X, Y, size);
}
