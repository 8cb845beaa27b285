// Broken: one thread per value in n / 256 full blocks, rounded down: the last n % 256 values are never counted.
#include <cuda_runtime.h>

__global__ void histogram_global(const int* __restrict__ input, int* __restrict__ counts, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[input[i]], 1);
}

extern "C" void solution(const int* input, int* counts, size_t n, size_t num_bins) {
    cudaMemsetAsync(counts, 0, sizeof(int) * num_bins);
    size_t blocks = n / 256;
    if (blocks > 0) histogram_global<<<(unsigned)blocks, 256>>>(input, counts, n);
}
