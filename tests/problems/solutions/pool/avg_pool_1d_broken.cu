// Broken: divides by the number of real elements in the window (count_include_pad=False), not by kernel_size.
#include <cuda_runtime.h>

__global__ void avg_pool1d_kernel(const float* in, float* out, long long h, size_t h_out, int k, int s, int p) {
    size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (o >= h_out) return;
    long long start = (long long)o * s - p;
    float sum = 0.0f;
    int count = 0;
    for (int j = 0; j < k; ++j) {
        long long i = start + j;
        if (i >= 0 && i < h) {
            sum += in[i];
            ++count;
        }
    }
    out[o] = sum / (float)count;
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, float* output, size_t H) {
    size_t h_out = (size_t)(((long long)H + 2LL * padding - kernel_size) / stride + 1);
    avg_pool1d_kernel<<<(unsigned)((h_out + 255) / 256), 256>>>(input, output, (long long)H, h_out, kernel_size,
                                                                  stride, padding);
}
