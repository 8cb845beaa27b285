// Broken: each thread shifts by its own running maximum instead of the row's, so the partial sums it adds up are
// scaled differently from one thread to the next.
#include <cuda_runtime.h>
#include <math_constants.h>

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

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// The maximum of v over the block, returned to every thread. blockDim.x must be a multiple of 32.
__device__ float block_max(float v) {
    __shared__ float warp_maxima[32];
    v = warp_max(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_maxima[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? warp_maxima[lane] : -INFINITY;
    v = warp_max(v);
    __syncthreads();  // the next call may overwrite warp_maxima
    return v;
}

__global__ void logsumexp_kernel(const float* __restrict__ x, float* __restrict__ out, size_t m) {
    const float* row = x + (size_t)blockIdx.x * m;
    float mx = -INFINITY;
    for (size_t j = threadIdx.x; j < m; j += blockDim.x) mx = fmaxf(mx, row[j]);
    const float local = mx;
    mx = block_max(mx);
    float sum = 0.0f;
    for (size_t j = threadIdx.x; j < m; j += blockDim.x) sum += expf(row[j] - local);
    sum = block_sum(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = mx + logf(sum);
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    if (n == 0 || m == 0) return;
    logsumexp_kernel<<<(unsigned)n, 512>>>(input, output, m);
}
