// Broken: forgets that 0 means "no edge" and treats missing edges as free ones.
// Prim's algorithm in one block of 1024 threads: the cheapest-edge key of every vertex lives in shared memory
// (-1 once the vertex is in the tree); each of the n - 1 steps is a block-wide argmin and one coalesced row update.
#include <cuda_runtime.h>
#include <math.h>

#define THREADS 1024

__global__ void prim_kernel(const float* __restrict__ a, float* __restrict__ out, size_t n) {
    extern __shared__ float key[];
    __shared__ float warp_best[THREADS / 32];
    __shared__ size_t warp_at[THREADS / 32];
    __shared__ size_t picked;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        float w = a[i];
        key[i] = i == 0 ? -1.0f : w;
    }
    __syncthreads();
    double total = 0.0;
    bool disconnected = false;
    for (size_t step = 1; step < n; ++step) {
        // Smallest (key, index) among vertices outside the tree; ties go to the lower index.
        float best = INFINITY;
        size_t at = n;
        for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
            float k = key[i];
            if (k >= 0.0f && (k < best || (k == best && i < at))) {
                best = k;
                at = i;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            float ob = __shfl_down_sync(0xffffffffu, best, o);
            size_t oa = __shfl_down_sync(0xffffffffu, at, o);
            if (ob < best || (ob == best && oa < at)) {
                best = ob;
                at = oa;
            }
        }
        if (lane == 0) {
            warp_best[warp] = best;
            warp_at[warp] = at;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < THREADS / 32; ++w) {
                if (warp_best[w] < best || (warp_best[w] == best && warp_at[w] < at)) {
                    best = warp_best[w];
                    at = warp_at[w];
                }
            }
            if (isinf(best)) disconnected = true;
            total += best;
            key[at] = -1.0f;
            picked = at;
        }
        __syncthreads();
        const float* row = a + picked * n;
        for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
            float k = key[i];
            float w = row[i];
            if (k >= 0.0f && w < k) key[i] = w;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = disconnected ? -1.0f : (float)total;
}

extern "C" void solution(const float* A, float* min_weight, size_t n) {
    size_t smem = n * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(prim_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    prim_kernel<<<1, THREADS, smem>>>(A, min_weight, n);
}
