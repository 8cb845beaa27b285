// Broken: an off-by-one in the depth loop (dz < K - 1), so the last plane of the kernel is never applied.
#include <cuda_runtime.h>

__global__ void conv3d_kernel(const float* a, const float* b, float* c, size_t s, int k) {
    size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t y = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    size_t z = blockIdx.z * (size_t)blockDim.z + threadIdx.z;
    if (x >= s || y >= s || z >= s) return;
    const long long n = (long long)s, r = k / 2;
    float acc = 0.0f;
    for (int dz = 0; dz < k - 1; ++dz) {
        for (int dy = 0; dy < k; ++dy) {
            for (int dx = 0; dx < k; ++dx) {
                long long zz = (long long)z + dz - r, yy = (long long)y + dy - r, xx = (long long)x + dx - r;
                if (zz < 0 || zz >= n || yy < 0 || yy >= n || xx < 0 || xx >= n) continue;
                acc += a[(zz * n + yy) * n + xx] * b[(dz * k + dy) * k + dx];
            }
        }
    }
    c[(z * s + y) * s + x] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t size, size_t K) {
    unsigned tiles = (unsigned)((size + 7) / 8);
    conv3d_kernel<<<dim3(tiles, tiles, tiles), dim3(8, 8, 8)>>>(A, B, C, size, (int)K);
}
