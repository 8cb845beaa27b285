// Broken: starts each window at o·stride, forgetting to shift it back by the padding.
#include <cuda_runtime.h>

__global__ void avg_pool2d_kernel(const float* in, float* out, long long h, long long w, size_t h_out, size_t w_out,
                                  int k, int s) {
    size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (o >= h_out * w_out) return;
    long long y0 = (long long)(o / w_out) * s, x0 = (long long)(o % w_out) * s;
    float sum = 0.0f;
    for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
            long long y = y0 + i, x = x0 + j;
            if (y < h && x < w) sum += in[y * w + x];
        }
    }
    out[o] = sum / (float)(k * k);
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, float* output, size_t H,
                         size_t W) {
    size_t h_out = (H + 2 * padding - kernel_size) / stride + 1, w_out = (W + 2 * padding - kernel_size) / stride + 1;
    size_t total = h_out * w_out;
    avg_pool2d_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input, output, (long long)H, (long long)W, h_out,
                                                                  w_out, kernel_size, stride);
}
