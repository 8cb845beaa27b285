// Floyd-Warshall: one launch per intermediate vertex k, one thread per (i, j). Row k and column k do not change
// during step k (dist[k][k] = 0), so each step updates the matrix in place.
#include <cuda_runtime.h>
#include <math.h>

__global__ void init_kernel(const float* __restrict__ adj, float* __restrict__ dist, size_t n) {
    size_t count = n * n;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < count; idx += (size_t)gridDim.x * blockDim.x) {
        float w = adj[idx];
        dist[idx] = idx / n == idx % n ? 0.0f : (w > 0.0f ? w : INFINITY);
    }
}

__global__ void relax_kernel(float* dist, size_t n, size_t k) {
    size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t i = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    float via = dist[i * n + k] + dist[k * n + j];
    if (via < dist[i * n + j]) dist[i * n + j] = via;
}

__global__ void finish_kernel(float* dist, size_t count) {
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < count; idx += (size_t)gridDim.x * blockDim.x) {
        if (isinf(dist[idx])) dist[idx] = -1.0f;
    }
}

extern "C" void solution(const float* adj_matrix, float* output, size_t n) {
    size_t count = n * n;
    size_t flat = (count + 255) / 256;
    if (flat > 65535 * 16) flat = 65535 * 16;
    init_kernel<<<(unsigned)flat, 256>>>(adj_matrix, output, n);
    dim3 block(32, 8);
    dim3 grid((unsigned)((n + 31) / 32), (unsigned)((n + 7) / 8));
    for (size_t k = 0; k < n; ++k) relax_kernel<<<grid, block>>>(output, n, k);
    finish_kernel<<<(unsigned)flat, 256>>>(output, count);
}
