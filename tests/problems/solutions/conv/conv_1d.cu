// Each block stages its 256 outputs' inputs (plus the K-1 halo, zeros outside the signal) and the kernel in
// shared memory, then every thread sums its K taps from there.
#include <cuda_runtime.h>

#define BLOCK 256

__global__ void conv1d_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                              size_t n, int k) {
    extern __shared__ float smem[];
    float* taps = smem;
    float* tile = smem + k;
    const int r = k / 2;
    const size_t start = blockIdx.x * (size_t)BLOCK;
    for (int j = threadIdx.x; j < k; j += BLOCK) taps[j] = b[j];
    for (int j = threadIdx.x; j < BLOCK + k - 1; j += BLOCK) {
        long long pos = (long long)start + j - r;
        tile[j] = (pos >= 0 && pos < (long long)n) ? a[pos] : 0.0f;
    }
    __syncthreads();
    const size_t i = start + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j) acc += tile[threadIdx.x + j] * taps[j];
    c[i] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t N, size_t K) {
    if (N == 0) return;
    int k = (int)K;
    size_t smem = (size_t)(2 * k + BLOCK - 1) * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(conv1d_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    unsigned blocks = (unsigned)((N + BLOCK - 1) / BLOCK);
    conv1d_kernel<<<blocks, BLOCK, smem>>>(A, B, C, N, k);
}
