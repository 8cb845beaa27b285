// One thread per output position: walks the reduced dimension with the stride the shape implies.
#include <cuda_runtime.h>

__global__ void argmax_kernel(const float* __restrict__ x, int* __restrict__ out, size_t outer, size_t r,
                              size_t inner) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    size_t o = idx / inner, i = idx % inner;
    const float* base = x + o * r * inner + i;
    float best = base[0];
    int best_at = 0;
    for (size_t j = 1; j < r; ++j) {
        float v = base[j * inner];
        if (v > best) { best = v; best_at = (int)j; }
    }
    out[idx] = best_at;
}

extern "C" void solution(const float* input, int dim, int* output, const int* shape, int ndim) {
    const int* host_shape = shape;  // host memory: read on the host, never in a kernel
    size_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= host_shape[d];
    for (int d = dim + 1; d < ndim; ++d) inner *= host_shape[d];
    size_t r = host_shape[dim];
    size_t total = outer * inner;
    argmax_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input, output, outer, r, inner);
}
