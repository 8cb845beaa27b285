// A warp per output when the reduced dimension is the last (contiguous) one, else a thread per output that
// walks the reduced dimension with stride `inner` (neighbouring threads read neighbouring addresses).
#include <cuda_runtime.h>
#include <climits>
#include <vector>

__device__ __forceinline__ void take_smaller(float& best, int& at, float v, int j) {
    if (v < best || (v == best && j < at)) { best = v; at = j; }
}

__global__ void argmin_rows(const float* __restrict__ x, int* __restrict__ out, size_t rows, size_t r) {
    size_t row = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) return;  // the whole warp leaves together
    const float* p = x + row * r;
    float best = INFINITY;
    int at = INT_MAX;
    for (size_t j = lane; j < r; j += 32) take_smaller(best, at, p[j], (int)j);
    for (int d = 16; d > 0; d >>= 1) {
        float v = __shfl_down_sync(0xffffffffu, best, d);
        int j = __shfl_down_sync(0xffffffffu, at, d);
        take_smaller(best, at, v, j);
    }
    if (lane == 0) out[row] = at;
}

__global__ void argmin_strided(const float* __restrict__ x, int* __restrict__ out, size_t outer, size_t r,
                               size_t inner) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    size_t o = idx / inner, i = idx % inner;
    const float* p = x + o * r * inner + i;
    float best = p[0];
    int at = 0;
    for (size_t j = 1; j < r; ++j) {
        float v = p[j * inner];
        if (v < best) { best = v; at = (int)j; }
    }
    out[idx] = at;
}

extern "C" void solution(const float* input, int dim, int* output, const int* shape, int ndim) {
    const int* host = shape;  // host memory: read on the host, never in a kernel
    size_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= (size_t)host[d];
    for (int d = dim + 1; d < ndim; ++d) inner *= (size_t)host[d];
    size_t r = (size_t)host[dim];
    if (inner == 1) {
        argmin_rows<<<(unsigned)((outer * 32 + 255) / 256), 256>>>(input, output, outer, r);
    } else {
        argmin_strided<<<(unsigned)((outer * inner + 255) / 256), 256>>>(input, output, outer, r, inner);
    }
}
