// One block per feature: two block-wide passes for the mean and the variance over the B runs of D1*D2 values
// that belong to the feature, then a pass that writes the normalized values.
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

__global__ void batch_norm_kernel(const float* __restrict__ x, float* __restrict__ y, size_t batch, size_t features,
                                  size_t spatial) {
    const size_t f = blockIdx.x;
    const float count = (float)(batch * spatial);
    float sum = 0.0f;
    for (size_t b = 0; b < batch; ++b) {
        const float* run = x + (b * features + f) * spatial;
        for (size_t s = threadIdx.x; s < spatial; s += blockDim.x) sum += run[s];
    }
    const float mean = block_sum(sum) / count;
    float sumsq = 0.0f;
    for (size_t b = 0; b < batch; ++b) {
        const float* run = x + (b * features + f) * spatial;
        for (size_t s = threadIdx.x; s < spatial; s += blockDim.x) {
            const float d = run[s] - mean;
            sumsq += d * d;
        }
    }
    const float rstd = rsqrtf(block_sum(sumsq) / count + 1e-5f);
    for (size_t b = 0; b < batch; ++b) {
        const size_t base = (b * features + f) * spatial;
        for (size_t s = threadIdx.x; s < spatial; s += blockDim.x) y[base + s] = (x[base + s] - mean) * rstd;
    }
}

extern "C" void solution(const float* X, float* Y, size_t B, size_t F, size_t D1, size_t D2) {
    if (B == 0 || F == 0 || D1 * D2 == 0) return;
    batch_norm_kernel<<<(unsigned)F, 512>>>(X, Y, B, F, D1 * D2);
}
