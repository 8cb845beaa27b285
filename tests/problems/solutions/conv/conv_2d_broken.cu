// Broken: indexes the kernel as B[j * Kh + i] (column-major), which only square kernels survive.
#include <cuda_runtime.h>

__global__ void conv2d_kernel(const float* a, const float* b, float* c, size_t h, size_t w, int kh, int kw) {
    size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x, y = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    if (y >= h || x >= w) return;
    float acc = 0.0f;
    for (int i = 0; i < kh; ++i) {
        for (int j = 0; j < kw; ++j) {
            long long yy = (long long)y + i - kh / 2, xx = (long long)x + j - kw / 2;
            if (yy >= 0 && yy < (long long)h && xx >= 0 && xx < (long long)w) acc += a[yy * w + xx] * b[j * kh + i];
        }
    }
    c[y * w + x] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t H, size_t W, size_t Kh, size_t Kw) {
    dim3 block(16, 16);
    dim3 grid((unsigned)((W + 15) / 16), (unsigned)((H + 15) / 16));
    conv2d_kernel<<<grid, block>>>(A, B, C, H, W, (int)Kh, (int)Kw);
}
