// Broken: ignores the dilation when walking the window (contiguous pixels), though the output size allows for it.
#include <cuda_runtime.h>
#include <math.h>

__global__ void max_pool2d_kernel(const float* in, float* out, long long h, long long w, size_t h_out, size_t w_out,
                                  int k, int s, int p) {
    size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (o >= h_out * w_out) return;
    long long y0 = (long long)(o / w_out) * s - p, x0 = (long long)(o % w_out) * s - p;
    float best = -INFINITY;
    for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
            long long y = y0 + i, x = x0 + j;
            if (y >= 0 && y < h && x >= 0 && x < w) best = fmaxf(best, in[y * w + x]);
        }
    }
    out[o] = best;
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, int dilation, float* output,
                         size_t H, size_t W) {
    long long reach = (long long)dilation * (kernel_size - 1) + 1;
    size_t h_out = (size_t)(((long long)H + 2LL * padding - reach) / stride + 1);
    size_t w_out = (size_t)(((long long)W + 2LL * padding - reach) / stride + 1);
    size_t total = h_out * w_out;
    max_pool2d_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input, output, (long long)H, (long long)W, h_out,
                                                                  w_out, kernel_size, stride, padding);
}
