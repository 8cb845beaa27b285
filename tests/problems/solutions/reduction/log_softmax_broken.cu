// Broken: the final sum takes only warp 0's partial, forgetting the other warps' share of the row.
#include <cuda_runtime.h>

// (max, sum of exp(x - max)) pairs combine by rescaling the sum with the smaller maximum.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    float hi = fmaxf(m, m2);
    s = s * expf(m - hi) + s2 * expf(m2 - hi);
    m = hi;
}

// One block per row: an online pass for the row maximum and the sum of exp, reduced across the block, then a
// pass that writes.
__global__ void rows_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n) {
    __shared__ float sm[32], ss[32];
    const float* p = x + blockIdx.x * n;
    float* q = y + blockIdx.x * n;
    float m = -INFINITY, s = 0.0f;
    for (size_t j = threadIdx.x; j < n; j += blockDim.x) merge(m, s, p[j], 1.0f);
    for (int d = 16; d > 0; d >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, d), s2 = __shfl_xor_sync(0xffffffffu, s, d);
        merge(m, s, m2, s2);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    m = sm[0];
    s = ss[0];
    for (size_t j = threadIdx.x; j < n; j += blockDim.x) q[j] = p[j] - m - logf(s);
}

extern "C" void solution(const float* input, float* output, size_t M, size_t N) {
    // Rows are at most 2^31 - 1 blocks; each block strides over its row.
    if (M > 0) rows_kernel<<<(unsigned)M, 512>>>(input, output, N);
}
