// A wrong CUDA vector_add: an off-by-one bound skips the last element of every case.
#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const int threads = 256;
    vector_add_kernel<<<(unsigned)((n + threads - 1) / threads), threads>>>(input_a, input_b, output_c, n);
}
