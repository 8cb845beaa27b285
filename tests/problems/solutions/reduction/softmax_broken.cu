// Broken: no maximum is subtracted, so exp() overflows to inf on slices with large offsets (inf / inf = NaN).
#include <cuda_runtime.h>
#include <vector>

__global__ void softmax_strided(const float* __restrict__ x, float* __restrict__ y, size_t outer, size_t r,
                                size_t inner) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    size_t o = idx / inner, i = idx % inner;
    const float* p = x + o * r * inner + i;
    float* q = y + o * r * inner + i;
    float s = 0.0f;
    for (size_t j = 0; j < r; ++j) s += expf(p[j * inner]);
    for (size_t j = 0; j < r; ++j) q[j * inner] = expf(p[j * inner]) / s;
}

extern "C" void solution(const float* input, int dim, float* output, const size_t* shape, size_t ndim) {
    std::vector<size_t> host(ndim);
    cudaMemcpy(host.data(), shape, sizeof(size_t) * ndim, cudaMemcpyDeviceToHost);
    size_t outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= host[d];
    for (size_t d = (size_t)dim + 1; d < ndim; ++d) inner *= host[d];
    size_t r = host[dim];
    softmax_strided<<<(unsigned)((outer * inner + 255) / 256), 256>>>(input, output, outer, r, inner);
}
