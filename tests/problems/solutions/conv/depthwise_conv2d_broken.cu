// Broken: forgets the kernel's channel offset, so channel 0's K×K kernel is applied to every channel.
#include <cuda_runtime.h>

__global__ void depthwise_kernel(const float* in, const float* kern, float* out, size_t channels, size_t h, size_t w,
                                 int k) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= channels * h * w) return;
    size_t x = idx % w, y = (idx / w) % h, ch = idx / (w * h);
    const float* plane = in + ch * h * w;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
            long long yy = (long long)y + i - k / 2, xx = (long long)x + j - k / 2;
            if (yy >= 0 && yy < (long long)h && xx >= 0 && xx < (long long)w) acc += plane[yy * w + xx] * kern[i * k + j];
        }
    }
    out[idx] = acc;
}

extern "C" void solution(const float* input, const float* kernel, float* output, size_t C, size_t H, size_t W,
                         size_t K) {
    size_t total = C * H * W;
    depthwise_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input, kernel, output, C, H, W, (int)K);
}
