// Softmax along any dimension. Contiguous slices (dim last): a block per slice, one online pass for the max
// and the sum of exp, a second pass to write. Strided slices: a thread per slice, the same two passes, with
// neighbouring threads on neighbouring addresses.
#include <cuda_runtime.h>
#include <vector>

// (max, sum of exp(x - max)) pairs combine by rescaling the sum with the smaller maximum.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) { m = m2; s = s2; return; }
    float hi = fmaxf(m, m2);
    s = s * expf(m - hi) + s2 * expf(m2 - hi);
    m = hi;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, size_t r) {
    __shared__ float sm[32], ss[32];
    const float* p = x + blockIdx.x * r;
    float* q = y + blockIdx.x * r;
    float m = -INFINITY, s = 0.0f;
    for (size_t j = threadIdx.x; j < r; j += blockDim.x) merge(m, s, p[j], 1.0f);
    for (int d = 16; d > 0; d >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, d), s2 = __shfl_xor_sync(0xffffffffu, s, d);
        merge(m, s, m2, s2);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    m = lane < warps ? sm[lane] : -INFINITY;
    s = lane < warps ? ss[lane] : 0.0f;
    for (int d = 16; d > 0; d >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, d), s2 = __shfl_xor_sync(0xffffffffu, s, d);
        merge(m, s, m2, s2);
    }
    float inv = 1.0f / s;
    for (size_t j = threadIdx.x; j < r; j += blockDim.x) q[j] = expf(p[j] - m) * inv;
}

__global__ void softmax_strided(const float* __restrict__ x, float* __restrict__ y, size_t outer, size_t r,
                                size_t inner) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    size_t o = idx / inner, i = idx % inner;
    const float* p = x + o * r * inner + i;
    float* q = y + o * r * inner + i;
    float m = -INFINITY, s = 0.0f;
    for (size_t j = 0; j < r; ++j) merge(m, s, p[j * inner], 1.0f);
    float inv = 1.0f / s;
    for (size_t j = 0; j < r; ++j) q[j * inner] = expf(p[j * inner] - m) * inv;
}

extern "C" void solution(const float* input, int dim, float* output, const size_t* shape, size_t ndim) {
    std::vector<size_t> host(ndim);
    cudaMemcpy(host.data(), shape, sizeof(size_t) * ndim, cudaMemcpyDeviceToHost);
    size_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= host[d];
    for (size_t d = (size_t)dim + 1; d < ndim; ++d) inner *= host[d];
    size_t r = host[dim];
    if (inner == 1) {
        softmax_rows<<<(unsigned)outer, 256>>>(input, output, r);
    } else {
        softmax_strided<<<(unsigned)((outer * inner + 255) / 256), 256>>>(input, output, outer, r, inner);
    }
}
