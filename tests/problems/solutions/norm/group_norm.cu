// One block per (sample, group): the group is one contiguous run of (C/G)*HW values. Two block-wide passes give
// its mean and variance; a third normalizes and applies the scale and shift of each value's channel.
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

__global__ void group_norm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, float* __restrict__ y, size_t groups,
                                  size_t per_group, size_t hw) {
    const size_t len = per_group * hw;
    const size_t group = blockIdx.x % groups;
    const float* run = x + (size_t)blockIdx.x * len;
    float* out = y + (size_t)blockIdx.x * len;
    float sum = 0.0f;
    for (size_t k = threadIdx.x; k < len; k += blockDim.x) sum += run[k];
    const float mean = block_sum(sum) / (float)len;
    float sumsq = 0.0f;
    for (size_t k = threadIdx.x; k < len; k += blockDim.x) {
        const float d = run[k] - mean;
        sumsq += d * d;
    }
    const float rstd = rsqrtf(block_sum(sumsq) / (float)len + 1e-5f);
    for (size_t k = threadIdx.x; k < len; k += blockDim.x) {
        const size_t c = group * per_group + k / hw;
        out[k] = (run[k] - mean) * rstd * gamma[c] + beta[c];
    }
}

extern "C" void solution(const float* X, const float* gamma, const float* beta, float* Y, size_t N, size_t C,
                         size_t HW, size_t G) {
    if (N == 0 || C == 0 || HW == 0 || G == 0) return;
    group_norm_kernel<<<(unsigned)(N * G), 512>>>(X, gamma, beta, Y, G, C / G, HW);
}
