// One block per row: a block-wide reduction of the sum of squares, then every element divided by the row's norm.
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

__global__ void l2_norm_kernel(const float* __restrict__ x, float* __restrict__ y, size_t d) {
    const float* row = x + (size_t)blockIdx.x * d;
    float* out = y + (size_t)blockIdx.x * d;
    float acc = 0.0f;
    for (size_t j = threadIdx.x; j < d; j += blockDim.x) {
        const float v = row[j];
        acc += v * v;
    }
    const float inv = 1.0f / (sqrtf(block_sum(acc)) + 1e-10f);
    for (size_t j = threadIdx.x; j < d; j += blockDim.x) out[j] = row[j] * inv;
}

extern "C" void solution(const float* X, float* Y, size_t B, size_t D) {
    if (B == 0 || D == 0) return;
    l2_norm_kernel<<<(unsigned)B, 256>>>(X, Y, D);
}
