// Broken: works through each row four elements at a time and never touches the N % 4 trailing elements.
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

__global__ void rms_norm_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n) {
    const float* row = x + (size_t)blockIdx.x * n;
    float* out = y + (size_t)blockIdx.x * n;
    const size_t quads = n / 4;
    float sumsq = 0.0f;
    for (size_t q = threadIdx.x; q < quads; q += blockDim.x) {
        for (int k = 0; k < 4; ++k) {
            const float v = row[4 * q + k];
            sumsq += v * v;
        }
    }
    const float scale = rsqrtf(block_sum(sumsq) / (float)n + 1e-5f);
    for (size_t q = threadIdx.x; q < quads; q += blockDim.x) {
        for (int k = 0; k < 4; ++k) out[4 * q + k] = row[4 * q + k] * scale;
    }
}

extern "C" void solution(const float* X, float* Y, size_t B, size_t N) {
    if (B == 0 || N == 0) return;
    rms_norm_kernel<<<(unsigned)B, 256>>>(X, Y, N);
}
