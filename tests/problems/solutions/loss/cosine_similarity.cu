// One block per row pair: block-wide sums of p·t, p·p and t·t, then 1 - dot / (|p| |t|).
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

__global__ void cosine_kernel(const float* __restrict__ p, const float* __restrict__ t, float* __restrict__ out,
                              size_t d) {
    const float* pr = p + (size_t)blockIdx.x * d;
    const float* tr = t + (size_t)blockIdx.x * d;
    float dot = 0.0f, pp = 0.0f, tt = 0.0f;
    for (size_t j = threadIdx.x; j < d; j += blockDim.x) {
        const float a = pr[j], b = tr[j];
        dot += a * b;
        pp += a * a;
        tt += b * b;
    }
    dot = block_sum(dot);
    pp = block_sum(pp);
    tt = block_sum(tt);
    if (threadIdx.x == 0) out[blockIdx.x] = 1.0f - dot / fmaxf(sqrtf(pp) * sqrtf(tt), 1e-8f);
}

extern "C" void solution(const float* predictions, const float* targets, float* output, size_t n, size_t d) {
    if (n == 0) return;
    cosine_kernel<<<(unsigned)n, 256>>>(predictions, targets, output, d);
}
