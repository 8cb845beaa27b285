// Broken: an off-by-one bound leaves the last element of every slice out of the sum. (Dividing by r - 1 instead
// of r, the bug this file had first, is within the relative tolerance of 1e-3 that Tensara allowed, for r >= 1000.)
#include <cuda_runtime.h>
#include <vector>

__device__ __forceinline__ float combine(float acc, float v) { return acc + v; }
__device__ __forceinline__ float finish(float acc, size_t r) { return acc / (float)r; }

// A warp per output when the reduced dimension is the last (contiguous) one.
__global__ void mean_dim_rows(const float* __restrict__ x, float* __restrict__ out, size_t rows, size_t r) {
    size_t row = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) return;  // the whole warp leaves together
    const float* p = x + row * r;
    float acc = 0.0f;
    for (size_t j = lane; j < r - 1; j += 32) acc = combine(acc, p[j]);
    for (int d = 16; d > 0; d >>= 1) acc = combine(acc, __shfl_down_sync(0xffffffffu, acc, d));
    if (lane == 0) out[row] = finish(acc, r);
}

// Otherwise a thread per output walks the reduced dimension with stride `inner`: neighbouring threads read
// neighbouring addresses.
__global__ void mean_dim_strided(const float* __restrict__ x, float* __restrict__ out, size_t outer, size_t r,
                           size_t inner) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    size_t o = idx / inner, i = idx % inner;
    const float* p = x + o * r * inner + i;
    float acc = 0.0f;
    for (size_t j = 0; j + 1 < r; ++j) acc = combine(acc, p[j * inner]);
    out[idx] = finish(acc, r);
}

extern "C" void solution(const float* input, int dim, float* output, const size_t* shape, size_t ndim) {
    std::vector<size_t> host(ndim);
    cudaMemcpy(host.data(), shape, sizeof(size_t) * ndim, cudaMemcpyDeviceToHost);
    size_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= host[d];
    for (size_t d = (size_t)dim + 1; d < ndim; ++d) inner *= host[d];
    size_t r = host[dim];
    if (inner == 1) {
        mean_dim_rows<<<(unsigned)((outer * 32 + 255) / 256), 256>>>(input, output, outer, r);
    } else {
        mean_dim_strided<<<(unsigned)((outer * inner + 255) / 256), 256>>>(input, output, outer, r, inner);
    }
}
