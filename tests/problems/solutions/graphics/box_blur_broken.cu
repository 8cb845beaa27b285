// Broken: divides by kernel_size² everywhere, darkening the border pixels whose window is clipped.
#include <cuda_runtime.h>

__global__ void box_blur_kernel(const float* in, float* out, size_t h, size_t w, int k) {
    size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x, y = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    if (y >= h || x >= w) return;
    int r = k / 2;
    float sum = 0.0f;
    for (int i = -r; i <= r; ++i) {
        for (int j = -r; j <= r; ++j) {
            long long yy = (long long)y + i, xx = (long long)x + j;
            if (yy >= 0 && yy < (long long)h && xx >= 0 && xx < (long long)w) sum += in[yy * w + xx];
        }
    }
    out[y * w + x] = sum / (float)(k * k);
}

extern "C" void solution(const float* input_image, int kernel_size, float* output_image, size_t height, size_t width) {
    dim3 block(16, 16);
    dim3 grid((unsigned)((width + 15) / 16), (unsigned)((height + 15) / 16));
    box_blur_kernel<<<grid, block>>>(input_image, output_image, height, width, kernel_size);
}
