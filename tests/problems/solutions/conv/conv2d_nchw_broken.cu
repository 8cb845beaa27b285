// Broken: the input offset leaves out the batch index, so every image is convolved from image 0's pixels.
#include <cuda_runtime.h>

__global__ void conv2d_nchw_kernel(const float* x, const float* wt, float* y, size_t n, size_t c_in, size_t h,
                                   size_t w, size_t c_out, int kh, int kw) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= n * c_out * h * w) return;
    size_t ox = idx % w, oy = (idx / w) % h, o = (idx / (w * h)) % c_out;
    float acc = 0.0f;
    for (size_t c = 0; c < c_in; ++c) {
        const float* plane = x + c * h * w;
        for (int i = 0; i < kh; ++i) {
            for (int j = 0; j < kw; ++j) {
                long long yy = (long long)oy + i - kh / 2, xx = (long long)ox + j - kw / 2;
                if (yy < 0 || yy >= (long long)h || xx < 0 || xx >= (long long)w) continue;
                acc += plane[yy * w + xx] * wt[((o * c_in + c) * kh + i) * kw + j];
            }
        }
    }
    y[idx] = acc;
}

extern "C" void solution(const float* input_x, const float* input_weight, float* output_y, size_t n, size_t c_in,
                         size_t h, size_t w, size_t c_out, size_t kh, size_t kw) {
    size_t total = n * c_out * h * w;
    conv2d_nchw_kernel<<<(unsigned)((total + 255) / 256), 256>>>(input_x, input_weight, output_y, n, c_in, h, w,
                                                                 c_out, (int)kh, (int)kw);
}
