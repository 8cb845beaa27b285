// Bellman-Ford on the dense matrix: each round, thread (v, chunk) relaxes v over the edges u -> v of one chunk of
// sources u, reading the matrix column-wise coalesced across v. Distances are non-negative, so their float bits
// order like ints and atomicMin on the bits keeps the smallest. Rounds repeat until one changes nothing.
#include <cuda_runtime.h>
#include <math.h>

#define CHUNKS 64

__device__ int g_changed;

__global__ void init_kernel(float* dist, size_t n, int source) {
    size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (v < n) dist[v] = v == (size_t)source ? 0.0f : INFINITY;
}

__global__ void relax_kernel(const float* __restrict__ adj, float* dist, size_t n, size_t chunk) {
    size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (v >= n) return;
    size_t u0 = blockIdx.y * chunk;
    size_t u1 = u0 + chunk < n ? u0 + chunk : n;
    float current = dist[v];
    float best = current;
    for (size_t u = u0; u < u1; ++u) {
        float w = adj[u * n + v];
        if (w > 0.0f) {
            float via = dist[u] + w;
            if (via < best) best = via;
        }
    }
    if (best < current) {
        int old = atomicMin((int*)&dist[v], __float_as_int(best));
        if (__float_as_int(best) < old) g_changed = 1;
    }
}

// Tensara's convention: a vertex the source cannot reach reads -1.
__global__ void unreachable_kernel(float* dist, size_t n) {
    size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (v < n && isinf(dist[v])) dist[v] = -1.0f;
}

extern "C" void solution(const float* d_adj_matrix, int source, float* d_distances, size_t n) {
    unsigned blocks = (unsigned)((n + 255) / 256);
    init_kernel<<<blocks, 256>>>(d_distances, n, source);
    size_t chunks = n < CHUNKS ? n : CHUNKS;
    size_t chunk = (n + chunks - 1) / chunks;
    chunks = (n + chunk - 1) / chunk;
    dim3 grid(blocks, (unsigned)chunks);
    const int zero = 0;
    for (size_t round = 0; round < n; ++round) {
        cudaMemcpyToSymbol(g_changed, &zero, sizeof(int));
        relax_kernel<<<grid, 256>>>(d_adj_matrix, d_distances, n, chunk);
        int changed = 0;
        cudaMemcpyFromSymbol(&changed, g_changed, sizeof(int));
        if (!changed) break;
    }
    unreachable_kernel<<<blocks, 256>>>(d_distances, n);
}
