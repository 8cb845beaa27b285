// conv-2d's tiled correlation (a 16×16 output tile per block, the input patch and kernel in shared memory),
// then ReLU and HardSwish on the sum before the one store.
#include <cuda_runtime.h>

#define TILE 16

__global__ void conv2d_relu_hardswish_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                             float* __restrict__ c, size_t h, size_t w, int kh, int kw) {
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
    float r = fmaxf(acc, 0.0f);
    c[y * w + x] = r * fminf(fmaxf(r + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
}

extern "C" void solution(const float* image, const float* kernel, float* output, size_t H, size_t W, size_t Kh,
                         size_t Kw) {
    if (H == 0 || W == 0) return;
    int kh = (int)Kh, kw = (int)Kw;
    size_t smem = (size_t)(kh * kw + (TILE + kh - 1) * (TILE + kw - 1)) * sizeof(float);
    if (smem > 48 * 1024) {
        cudaFuncSetAttribute(conv2d_relu_hardswish_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    }
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((W + TILE - 1) / TILE), (unsigned)((H + TILE - 1) / TILE));
    conv2d_relu_hardswish_kernel<<<grid, block, smem>>>(image, kernel, output, H, W, kh, kw);
}
