// Broken: one pass with the variance taken as mean(x²), forgetting to subtract mean², so any sample whose mean is
// not zero is scaled wrongly.
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

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, float* __restrict__ y, size_t len) {
    const float* row = x + (size_t)blockIdx.x * len;
    float* out = y + (size_t)blockIdx.x * len;
    float sum = 0.0f, sumsq = 0.0f;
    for (size_t k = threadIdx.x; k < len; k += blockDim.x) {
        sum += row[k];
        sumsq += row[k] * row[k];
    }
    const float mean = block_sum(sum) / (float)len;
    const float var = block_sum(sumsq) / (float)len;
    const float rstd = rsqrtf(var + 1e-5f);
    for (size_t k = threadIdx.x; k < len; k += blockDim.x) out[k] = (row[k] - mean) * rstd * gamma[k] + beta[k];
}

extern "C" void solution(const float* X, const float* gamma, const float* beta, float* Y, size_t B, size_t F,
                         size_t D1, size_t D2) {
    const size_t len = F * D1 * D2;
    if (B == 0 || len == 0) return;
    layer_norm_kernel<<<(unsigned)B, 1024>>>(X, gamma, beta, Y, len);
}
