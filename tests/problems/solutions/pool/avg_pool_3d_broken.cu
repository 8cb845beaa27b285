// Broken: addresses the input as H×D×W (the two fast axes swapped), which only cubic volumes survive.
#include <cuda_runtime.h>

__global__ void avg_pool3d_kernel(const float* in, float* out, long long h, long long w, long long d, size_t h_out,
                                  size_t w_out, size_t d_out, int k, int s, int p) {
    size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (o >= h_out * w_out * d_out) return;
    long long d0 = (long long)(o % d_out) * s - p;
    long long w0 = (long long)((o / d_out) % w_out) * s - p;
    long long h0 = (long long)(o / (d_out * w_out)) * s - p;
    float sum = 0.0f;
    for (int a = 0; a < k; ++a) {
        for (int b = 0; b < k; ++b) {
            for (int c = 0; c < k; ++c) {
                long long ih = h0 + a, iw = w0 + b, id = d0 + c;
                if (ih < 0 || ih >= h || iw < 0 || iw >= w || id < 0 || id >= d) continue;
                sum += in[(ih * d + id) * w + iw];
            }
        }
    }
    out[o] = sum / (float)(k * k * k);
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, float* output, size_t H,
                         size_t W, size_t D) {
    size_t h_out = (H + 2 * padding - kernel_size) / stride + 1;
    size_t w_out = (W + 2 * padding - kernel_size) / stride + 1;
    size_t d_out = (D + 2 * padding - kernel_size) / stride + 1;
    size_t total = h_out * w_out * d_out;
    avg_pool3d_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input, output, (long long)H, (long long)W,
                                                                  (long long)D, h_out, w_out, d_out, kernel_size,
                                                                  stride, padding);
}
