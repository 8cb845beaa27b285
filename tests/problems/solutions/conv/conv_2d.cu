// A 16×16 tile of outputs per block: the (16+Kh-1)×(16+Kw-1) input patch (zeros outside the image) and the
// kernel go to shared memory, then each thread sums its Kh·Kw taps.
#include <cuda_runtime.h>

#define TILE 16

__global__ void conv2d_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                              size_t h, size_t w, int kh, int kw) {
    extern __shared__ float smem[];
    float* taps = smem;
    float* patch = smem + kh * kw;
    const int pw = TILE + kw - 1, ph = TILE + kh - 1;
    const long long y0 = (long long)blockIdx.y * TILE - kh / 2, x0 = (long long)blockIdx.x * TILE - kw / 2;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    for (int i = tid; i < kh * kw; i += TILE * TILE) taps[i] = b[i];
    for (int i = tid; i < ph * pw; i += TILE * TILE) {
        long long y = y0 + i / pw, x = x0 + i % pw;
        patch[i] = (y >= 0 && y < (long long)h && x >= 0 && x < (long long)w) ? a[(size_t)y * w + (size_t)x] : 0.0f;
    }
    __syncthreads();
    const size_t y = (size_t)blockIdx.y * TILE + threadIdx.y, x = (size_t)blockIdx.x * TILE + threadIdx.x;
    if (y >= h || x >= w) return;
    float acc = 0.0f;
    for (int i = 0; i < kh; ++i) {
        const float* row = patch + (threadIdx.y + i) * pw + threadIdx.x;
        for (int j = 0; j < kw; ++j) acc += row[j] * taps[i * kw + j];
    }
    c[y * w + x] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t H, size_t W, size_t Kh, size_t Kw) {
    if (H == 0 || W == 0) return;
    int kh = (int)Kh, kw = (int)Kw;
    size_t smem = (size_t)(kh * kw + (TILE + kh - 1) * (TILE + kw - 1)) * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(conv2d_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((W + TILE - 1) / TILE), (unsigned)((H + TILE - 1) / TILE));
    conv2d_kernel<<<grid, block, smem>>>(A, B, C, H, W, kh, kw);
}
