// Broken: compares with >=, so pixels exactly at the threshold become 255 instead of 0.
#include <cuda_runtime.h>

__global__ void threshold_kernel(const float* in, float t, float* out, size_t count) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < count) out[i] = in[i] >= t ? 255.0f : 0.0f;
}

extern "C" void solution(const float* input_image, float threshold_value, float* output_image, size_t height,
                         size_t width) {
    size_t count = height * width;
    threshold_kernel<<<(unsigned)((count + 255) / 256), 256>>>(input_image, threshold_value, output_image, count);
}
