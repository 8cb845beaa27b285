// An 8×8×8 tile of outputs per block: the (8+K-1)³ input patch (zeros outside the volume) and the K³ kernel go
// to shared memory, then each thread sums its K³ taps.
#include <cuda_runtime.h>

#define TILE 8

__global__ void conv3d_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                              size_t s, int k) {
    extern __shared__ float smem[];
    const int p = TILE + k - 1;
    float* taps = smem;
    float* patch = smem + k * k * k;
    const int r = k / 2;
    const long long z0 = (long long)blockIdx.z * TILE - r, y0 = (long long)blockIdx.y * TILE - r,
                    x0 = (long long)blockIdx.x * TILE - r;
    const int tid = (threadIdx.z * TILE + threadIdx.y) * TILE + threadIdx.x;
    const int threads = TILE * TILE * TILE;
    const long long n = (long long)s;
    for (int i = tid; i < k * k * k; i += threads) taps[i] = b[i];
    for (int i = tid; i < p * p * p; i += threads) {
        long long z = z0 + i / (p * p), y = y0 + (i / p) % p, x = x0 + i % p;
        bool inside = z >= 0 && z < n && y >= 0 && y < n && x >= 0 && x < n;
        patch[i] = inside ? a[((size_t)z * s + (size_t)y) * s + (size_t)x] : 0.0f;
    }
    __syncthreads();
    const size_t z = (size_t)blockIdx.z * TILE + threadIdx.z, y = (size_t)blockIdx.y * TILE + threadIdx.y,
                 x = (size_t)blockIdx.x * TILE + threadIdx.x;
    if (z >= s || y >= s || x >= s) return;
    float acc = 0.0f;
    for (int dz = 0; dz < k; ++dz) {
        for (int dy = 0; dy < k; ++dy) {
            const float* row = patch + ((threadIdx.z + dz) * p + threadIdx.y + dy) * p + threadIdx.x;
            const float* tap = taps + (dz * k + dy) * k;
            for (int dx = 0; dx < k; ++dx) acc += row[dx] * tap[dx];
        }
    }
    c[(z * s + y) * s + x] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t size, size_t K) {
    if (size == 0) return;
    int k = (int)K;
    size_t p = TILE + K - 1;
    size_t smem = (K * K * K + p * p * p) * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(conv3d_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    unsigned tiles = (unsigned)((size + TILE - 1) / TILE);
    dim3 block(TILE, TILE, TILE);
    dim3 grid(tiles, tiles, tiles);
    conv3d_kernel<<<grid, block, smem>>>(A, B, C, size, k);
}
