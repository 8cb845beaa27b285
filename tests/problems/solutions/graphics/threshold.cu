// One thread per pixel (a grid-stride loop): 255 strictly above the threshold, else 0.
#include <cuda_runtime.h>

__global__ void threshold_kernel(const float* __restrict__ in, float t, float* __restrict__ out, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        out[i] = in[i] > t ? 255.0f : 0.0f;
    }
}

extern "C" void solution(const float* input_image, float threshold_value, float* output_image, size_t height,
                         size_t width) {
    size_t count = height * width;
    if (count == 0) return;
    size_t blocks = (count + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    threshold_kernel<<<(unsigned)blocks, 256>>>(input_image, threshold_value, output_image, count);
}
