// Broken: assumes the reduced dimension is the last one (stride 1), which holds only for dim = ndim - 1.
#include <cuda_runtime.h>

__global__ void argmax_kernel(const float* x, int* out, size_t rows, size_t r) {
    size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float best = x[row * r];
    int best_at = 0;
    for (size_t j = 1; j < r; ++j) {
        if (x[row * r + j] > best) { best = x[row * r + j]; best_at = (int)j; }
    }
    out[row] = best_at;
}

extern "C" void solution(const float* input, int dim, int* output, const int* shape, int ndim) {
    const int* host_shape = shape;  // host memory: read on the host, never in a kernel
    size_t total = 1;
    for (int d = 0; d < ndim; ++d) total *= host_shape[d];
    size_t r = host_shape[dim];
    argmax_kernel<<<(unsigned)((total / r + 255) / 256), 256>>>(input, output, total / r, r);
}
