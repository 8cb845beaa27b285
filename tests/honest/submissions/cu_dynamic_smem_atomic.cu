// Honest: a shared-memory reduction with atomicAdd into an output cleared by cudaMemsetAsync.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void block_sum_atomic(const float* x, float* out, size_t n) {
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) sum += x[i];
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, cache[0]);
}

extern "C" void solution(const float* input_x, float* output_sum, size_t n) {
    cudaMemsetAsync(output_sum, 0, sizeof(float), 0);
    size_t blocks = (n + 255) / 256;
    if (blocks > 1024) blocks = 1024;
    block_sum_atomic<<<(unsigned)blocks, 256, 256 * sizeof(float)>>>(input_x, output_sum, n);
}
