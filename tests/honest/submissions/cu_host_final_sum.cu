// Honest: reduces to per-block sums on the GPU, finishes the sum on the host, copies it back (blocking copies).
#include <cuda_runtime.h>
#include <cstdio>

__global__ void partial_sums(const float* x, float* partial, size_t n) {
    extern __shared__ float cache[];
    float sum = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) sum += x[i];
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}

#include <vector>

static float* partial = nullptr;
static const unsigned BLOCKS = 256;

extern "C" void solution(const float* input_x, float* output_sum, size_t n) {
    if (partial == nullptr) cudaMalloc(&partial, BLOCKS * sizeof(float));
    partial_sums<<<BLOCKS, 256, 256 * sizeof(float)>>>(input_x, partial, n);
    std::vector<float> host(BLOCKS);
    cudaMemcpy(host.data(), partial, BLOCKS * sizeof(float), cudaMemcpyDeviceToHost);
    double total = 0.0;
    for (float v : host) total += v;
    float result = (float)total;
    cudaMemcpy(output_sum, &result, sizeof(float), cudaMemcpyHostToDevice);
}
