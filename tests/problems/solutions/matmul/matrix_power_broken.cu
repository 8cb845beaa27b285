// Broken: the multiplication loop runs one product short and leaves A^(n-1) in the output.
#include <cuda_runtime.h>

__global__ void gemm_kernel(const float* a, const float* b, float* c, size_t n) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float acc = 0.0f;
    for (size_t k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

extern "C" void solution(const float* input_matrix, size_t n, float* output_matrix, size_t size) {
    const size_t bytes = size * size * sizeof(float);
    float* tmp = nullptr;
    cudaMallocAsync(reinterpret_cast<void**>(&tmp), bytes, 0);
    cudaMemcpyAsync(output_matrix, input_matrix, bytes, cudaMemcpyDeviceToDevice, 0);
    const unsigned tiles = (unsigned)((size + 15) / 16);
    for (size_t i = 2; i < n; ++i) {
        gemm_kernel<<<dim3(tiles, tiles), dim3(16, 16)>>>(output_matrix, input_matrix, tmp, size);
        cudaMemcpyAsync(output_matrix, tmp, bytes, cudaMemcpyDeviceToDevice, 0);
    }
    cudaFreeAsync(tmp, 0);
}
