// Honest: softmax along `dim` launched block of slices by block of slices from a host loop. The shape arrives as a
// device array, so the host copies it back first (a blocking copy, as Tensara solutions did).
#include <cuda_runtime.h>
#include <algorithm>
#include <vector>

// One thread block per slice: `count` elements `stride` apart, starting at slice (o, i) = (outer, inner) index.
__global__ void softmax_slices(const float* x, float* y, size_t first, size_t count, size_t stride) {
    __shared__ float scratch[256];
    size_t slice = first + blockIdx.x;
    size_t outer = slice / stride, inner = slice % stride;
    const float* row = x + outer * count * stride + inner;
    float* out = y + outer * count * stride + inner;
    float peak = -INFINITY;
    for (size_t j = threadIdx.x; j < count; j += blockDim.x) peak = fmaxf(peak, row[j * stride]);
    scratch[threadIdx.x] = peak;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
        __syncthreads();
    }
    peak = scratch[0];
    __syncthreads();
    float sum = 0.0f;
    for (size_t j = threadIdx.x; j < count; j += blockDim.x) sum += expf(row[j * stride] - peak);
    scratch[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    float total = scratch[0];
    for (size_t j = threadIdx.x; j < count; j += blockDim.x) out[j * stride] = expf(row[j * stride] - peak) / total;
}

extern "C" void solution(const float* input, int dim, float* output, const size_t* shape, size_t ndim) {
    std::vector<size_t> sizes(ndim);
    cudaMemcpy(sizes.data(), shape, ndim * sizeof(size_t), cudaMemcpyDeviceToHost);
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < ndim; ++d) {
        if ((int)d < dim) outer *= sizes[d];
        if ((int)d > dim) inner *= sizes[d];
    }
    // Blocks of at least 256 slices, and at most 64 launches however many slices there are.
    const size_t count = sizes[dim], slices = outer * inner;
    const size_t block_slices = std::max<size_t>(256, (slices + 63) / 64);
    for (size_t start = 0; start < slices; start += block_slices) {
        size_t n = start + block_slices > slices ? slices - start : block_slices;
        softmax_slices<<<(unsigned)n, 256>>>(input, output, start, count, inner);
    }
}
