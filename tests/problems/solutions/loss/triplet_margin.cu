// One block per triplet: block-wide sums of both squared distances, the hinge added to a double accumulator,
// then a one-thread kernel writes the mean.
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

__device__ double g_total;

__global__ void clear_kernel() { g_total = 0.0; }

__global__ void triplet_kernel(const float* __restrict__ a, const float* __restrict__ p, const float* __restrict__ n,
                               size_t e, float margin) {
    const size_t base = (size_t)blockIdx.x * e;
    float pos = 0.0f, neg = 0.0f;
    for (size_t j = threadIdx.x; j < e; j += blockDim.x) {
        const float av = a[base + j];
        const float dp = av - p[base + j], dn = av - n[base + j];
        pos += dp * dp;
        neg += dn * dn;
    }
    pos = block_sum(pos);
    neg = block_sum(neg);
    if (threadIdx.x == 0) atomicAdd(&g_total, (double)fmaxf(0.0f, sqrtf(pos) - sqrtf(neg) + margin));
}

__global__ void finish_kernel(float* loss, size_t b) { loss[0] = (float)(g_total / (double)b); }

extern "C" void solution(const float* anchor, const float* positive, const float* negative, float* loss, size_t B,
                         size_t E, float margin) {
    if (B == 0) return;
    clear_kernel<<<1, 1>>>();
    triplet_kernel<<<(unsigned)B, 256>>>(anchor, positive, negative, E, margin);
    finish_kernel<<<1, 1>>>(loss, B);
}
