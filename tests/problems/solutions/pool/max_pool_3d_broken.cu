// Broken: starts each window at o·stride, forgetting to shift it back by the padding.
#include <cuda_runtime.h>
#include <math.h>

__global__ void max_pool3d_kernel(const float* in, float* out, long long h, long long w, long long d, size_t h_out,
                                  size_t w_out, size_t d_out, int k, int s, int dil) {
    size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (o >= h_out * w_out * d_out) return;
    long long d0 = (long long)(o % d_out) * s;
    long long w0 = (long long)((o / d_out) % w_out) * s;
    long long h0 = (long long)(o / (d_out * w_out)) * s;
    float best = -INFINITY;
    for (int a = 0; a < k; ++a) {
        for (int b = 0; b < k; ++b) {
            for (int c = 0; c < k; ++c) {
                long long ih = h0 + (long long)a * dil, iw = w0 + (long long)b * dil, id = d0 + (long long)c * dil;
                if (ih < h && iw < w && id < d) best = fmaxf(best, in[(ih * w + iw) * d + id]);
            }
        }
    }
    out[o] = best;
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, int dilation, float* output,
                         size_t H, size_t W, size_t D) {
    long long reach = (long long)dilation * (kernel_size - 1) + 1;
    size_t h_out = (size_t)(((long long)H + 2LL * padding - reach) / stride + 1);
    size_t w_out = (size_t)(((long long)W + 2LL * padding - reach) / stride + 1);
    size_t d_out = (size_t)(((long long)D + 2LL * padding - reach) / stride + 1);
    size_t total = h_out * w_out * d_out;
    max_pool3d_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input, output, (long long)H, (long long)W,
                                                                  (long long)D, h_out, w_out, d_out, kernel_size,
                                                                  stride, dilation);
}
