// Broken: ignores the sign bit of each nibble, so negative values come out positive.
#include <cstdint>
#include <cuda_runtime.h>

__constant__ float kE2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

__global__ void mxfp4_dequantize_kernel(const uint8_t* q, const uint8_t* scale, float* out, size_t bytes) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x) {
        uint8_t b = q[i];
        float f = ldexpf(1.0f, (int)scale[i / 16] - 127);
        out[2 * i] = kE2M1[b & 0x7] * f;
        out[2 * i + 1] = kE2M1[(b >> 4) & 0x7] * f;
    }
}

extern "C" void solution(const uint8_t* q, const uint8_t* scale, float* out, size_t m, size_t k) {
    size_t bytes = m * k / 2;
    if (bytes == 0) return;
    size_t blocks = (bytes + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    mxfp4_dequantize_kernel<<<(unsigned)blocks, 256>>>(q, scale, out, bytes);
}
