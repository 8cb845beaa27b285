// Broken: launches total / 256 blocks (rounded down), so the last total % 256 outputs are never written.
#include <cuda_runtime.h>
#include <vector>

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
    size_t total = outer * inner;
    if (total / 256 > 0) argmin_strided<<<(unsigned)(total / 256), 256>>>(input, output, outer, r, inner);
}
