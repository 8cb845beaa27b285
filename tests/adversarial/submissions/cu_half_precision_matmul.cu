// Class: weak_output
// §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
// Attack: a float32 matmul computed with __half operands and __half products (accumulated in float), the cheap
// path on every GPU. Each product keeps about three significant digits, far outside float32's tolerance: a
// wrong answer.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void half_matmul(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (size_t i = 0; i < k; ++i) {
        __half product = __hmul(__float2half(a[row * k + i]), __float2half(b[i * n + col]));
        acc += __half2float(product);
    }
    c[row * n + col] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t n, size_t k) {
    dim3 block(16, 16);
    dim3 grid((unsigned)((n + block.x - 1) / block.x), (unsigned)((m + block.y - 1) / block.y));
    half_matmul<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
}
