// Reduce, scan, scan again over int32: (1) each block sums its 2048-value tile, (2) one block turns the tile sums
// into exclusive offsets, (3) each block scans its tile (thread-serial over 8 values, warp shuffles across
// threads) and adds its offset. Integer adds are exact in any order.
#include <cuda_runtime.h>

constexpr int THREADS = 256, ITEMS = 8, TILE = THREADS * ITEMS, WARPS = THREADS / 32;
constexpr int SCAN_THREADS = 1024;

// Exclusive scan of one value per thread across a block of `kThreads`; `total` receives the block's sum.
template <typename T, int kThreads>
__device__ T block_exclusive_scan(T v, T* warp_sums, T& total) {
    constexpr int kWarps = kThreads / 32;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T inc = v;
    for (int d = 1; d < 32; d <<= 1) {
        T y = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d) inc += y;
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        T w = lane < kWarps ? warp_sums[lane] : T(0);
        for (int d = 1; d < 32; d <<= 1) {
            T y = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= d) w += y;
        }
        if (lane < kWarps) warp_sums[lane] = w;
    }
    __syncthreads();
    total = warp_sums[kWarps - 1];
    T before = warp > 0 ? warp_sums[warp - 1] : T(0);
    T in_warp = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane == 0) in_warp = T(0);
    __syncthreads();  // warp_sums may be reused by the caller's next scan
    return before + in_warp;
}

__global__ void tile_sums(const int* __restrict__ x, int* __restrict__ sums, size_t n) {
    __shared__ int warp_sums[WARPS];
    size_t base = blockIdx.x * (size_t)TILE;
    int acc = 0;
    for (int k = 0; k < ITEMS; ++k) {
        size_t i = base + (size_t)k * THREADS + threadIdx.x;
        if (i < n) acc += x[i];
    }
    int total;
    block_exclusive_scan<int, THREADS>(acc, warp_sums, total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// One block: exclusive offsets of `tiles` tile sums, in place, in chunks of SCAN_THREADS with a running carry.
__global__ void scan_sums(int* __restrict__ sums, size_t tiles) {
    __shared__ int warp_sums[SCAN_THREADS / 32];
    int carry = 0;
    for (size_t start = 0; start < tiles; start += SCAN_THREADS) {
        size_t i = start + threadIdx.x;
        int v = i < tiles ? sums[i] : 0;
        int total;
        int before = block_exclusive_scan<int, SCAN_THREADS>(v, warp_sums, total);
        if (i < tiles) sums[i] = carry + before;
        carry += total;
    }
}

__global__ void tile_scan(const int* __restrict__ x, int* __restrict__ y, const int* __restrict__ offsets, size_t n) {
    __shared__ int tile[TILE];
    __shared__ int warp_sums[WARPS];
    size_t base = blockIdx.x * (size_t)TILE;
    for (int k = 0; k < ITEMS; ++k) {  // coalesced load
        size_t i = base + (size_t)k * THREADS + threadIdx.x;
        tile[k * THREADS + threadIdx.x] = i < n ? x[i] : 0;
    }
    __syncthreads();
    int run[ITEMS];
    int acc = 0;
    for (int k = 0; k < ITEMS; ++k) {
        acc += tile[threadIdx.x * ITEMS + k];
        run[k] = acc;
    }
    int total;
    int before = block_exclusive_scan<int, THREADS>(acc, warp_sums, total);
    int offset = offsets[blockIdx.x] + before;
    for (int k = 0; k < ITEMS; ++k) tile[threadIdx.x * ITEMS + k] = offset + run[k];
    __syncthreads();
    for (int k = 0; k < ITEMS; ++k) {  // coalesced store
        size_t i = base + (size_t)k * THREADS + threadIdx.x;
        if (i < n) y[i] = tile[k * THREADS + threadIdx.x];
    }
}

extern "C" void solution(const int* input, int* output, size_t n) {
    if (n == 0) return;
    size_t tiles = (n + TILE - 1) / TILE;
    // Scratch for the tile sums, kept between calls and grown when a larger N comes.
    static int* scratch = nullptr;
    static size_t capacity = 0;
    if (tiles > capacity) {
        if (scratch) cudaFree(scratch);
        cudaMalloc(&scratch, tiles * sizeof(int));
        capacity = tiles;
    }
    tile_sums<<<(unsigned)tiles, THREADS>>>(input, scratch, n);
    scan_sums<<<1, SCAN_THREADS>>>(scratch, tiles);
    tile_scan<<<(unsigned)tiles, THREADS>>>(input, output, scratch, n);
}
