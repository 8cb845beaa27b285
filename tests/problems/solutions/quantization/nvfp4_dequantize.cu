// One thread per byte: two E2M1 values (low nibble first) times their block's E4M3 scale, divided by sf_g. The
// scales are in flashinfer's layout_128x4 (cuBLAS's swizzled 128x4 tiles).
#include <cstdint>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

__constant__ float kE2M1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// The index of the scale of (row, block): 512-byte tiles of 128 rows x 4 blocks, row-major over the padded tile
// grid; inside a tile, row r and block b lie at (r % 32) * 16 + (r / 32 % 4) * 4 + b.
__device__ __forceinline__ size_t swizzled(size_t row, size_t blk, size_t blocks) {
    size_t tiles_per_row = (blocks + 3) / 4;
    return ((row / 128) * tiles_per_row + blk / 4) * 512 + (row % 32) * 16 + ((row / 32) % 4) * 4 + (blk % 4);
}

__global__ void nvfp4_dequantize_kernel(const uint8_t* __restrict__ q, const __nv_fp8_e4m3* __restrict__ scale,
                                        float sf_g, float* __restrict__ out, size_t bytes, size_t k) {
    size_t half_k = k / 2;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x) {
        uint8_t b = q[i];
        // Elements 2i and 2i + 1 share a row and a block of 16 (k is a multiple of 16).
        size_t row = i / half_k;
        size_t col = 2 * (i % half_k);
        float s = float(scale[swizzled(row, col / 16, k / 16)]);
        out[2 * i] = kE2M1[b & 0xF] * s / sf_g;
        out[2 * i + 1] = kE2M1[b >> 4] * s / sf_g;
    }
}

extern "C" void solution(const uint8_t* q, const __nv_fp8_e4m3* scale, float sf_g, float* out, size_t m, size_t k) {
    size_t bytes = m * k / 2;
    if (bytes == 0) return;
    size_t blocks = (bytes + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    nvfp4_dequantize_kernel<<<(unsigned)blocks, 256>>>(q, scale, sf_g, out, bytes, k);
}
