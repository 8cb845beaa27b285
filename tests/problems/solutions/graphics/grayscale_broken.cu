// Broken: reads the pixels as BGR, so the red and blue weights land on the wrong channels.
#include <cuda_runtime.h>

__global__ void grayscale_kernel(const float* rgb, float* gray, size_t pixels, size_t channels) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= pixels) return;
    const float* px = rgb + i * channels;
    gray[i] = 0.114f * px[0] + 0.587f * px[1] + 0.299f * px[2];
}

extern "C" void solution(const float* rgb_image, float* grayscale_output, size_t height, size_t width,
                         size_t channels) {
    size_t pixels = height * width;
    grayscale_kernel<<<(unsigned)((pixels + 255) / 256), 256>>>(rgb_image, grayscale_output, pixels, channels);
}
