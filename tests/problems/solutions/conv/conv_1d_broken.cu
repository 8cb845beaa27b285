// Broken: forgets to centre the kernel: C[i] sums A[i + j] instead of A[i + j - (K-1)/2].
#include <cuda_runtime.h>

__global__ void conv1d_kernel(const float* a, const float* b, float* c, size_t n, int k) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j) {
        size_t pos = i + j;
        if (pos < n) acc += a[pos] * b[j];
    }
    c[i] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t N, size_t K) {
    conv1d_kernel<<<(unsigned)((N + 255) / 256), 256>>>(A, B, C, N, (int)K);
}
