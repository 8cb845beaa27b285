// Broken: starts the running max at 0 instead of −∞, so a window of negative values returns 0.
#include <cuda_runtime.h>

__global__ void max_pool1d_kernel(const float* in, float* out, long long h, size_t h_out, int k, int s, int p, int d) {
    size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (o >= h_out) return;
    long long start = (long long)o * s - p;
    float best = 0.0f;
    for (int j = 0; j < k; ++j) {
        long long i = start + (long long)j * d;
        if (i >= 0 && i < h) best = fmaxf(best, in[i]);
    }
    out[o] = best;
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, int dilation, float* output,
                         size_t H) {
    size_t h_out = (size_t)(((long long)H + 2LL * padding - (long long)dilation * (kernel_size - 1) - 1) / stride + 1);
    max_pool1d_kernel<<<(unsigned)((h_out + 255) / 256), 256>>>(input, output, (long long)H, h_out, kernel_size,
                                                                  stride, padding, dilation);
}
