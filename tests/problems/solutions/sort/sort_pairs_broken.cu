// Broken: ranks equal digits within a warp in reverse lane order, so no pass is stable (LSD radix needs every pass stable).
// LSD radix sort, 4 passes of 8 bits over the keys with the sign bit flipped (so signed order is unsigned order).
// Each pass: per-tile digit histograms, a scan of them in digit-major order (tile t's digit d goes after every
// smaller digit and after digit d of tiles < t), then a stable scatter: within a tile, elements are placed in index
// order using __match_any_sync ranks inside each warp and per-warp digit counts across warps.
#include <cuda_runtime.h>
#include <cstdint>

#define THREADS 256
#define WARPS (THREADS / 32)
#define ITEMS 16
#define TILE (THREADS * ITEMS)
#define RADIX 256
#define SCAN_THREADS 1024

__device__ __forceinline__ unsigned digit_of(int key, int shift) {
    return (((unsigned)key ^ 0x80000000u) >> shift) & 0xFFu;
}

__global__ void histogram_kernel(const int* __restrict__ keys, unsigned* __restrict__ counts, size_t n, size_t tiles,
                                 int shift) {
    __shared__ unsigned hist[RADIX];
    hist[threadIdx.x] = 0;
    __syncthreads();
    size_t base = blockIdx.x * (size_t)TILE;
    for (int r = 0; r < ITEMS; ++r) {
        size_t i = base + (size_t)r * THREADS + threadIdx.x;
        if (i < n) atomicAdd(&hist[digit_of(keys[i], shift)], 1u);
    }
    __syncthreads();
    counts[threadIdx.x * tiles + blockIdx.x] = hist[threadIdx.x];
}

// Block d turns row d of the counts (one entry per tile) into exclusive offsets and writes the row's total.
__global__ void scan_rows_kernel(unsigned* counts, unsigned* totals, size_t tiles) {
    __shared__ unsigned warp_sums[SCAN_THREADS / 32];
    __shared__ unsigned carry;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned* row = counts + blockIdx.x * tiles;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (size_t start = 0; start < tiles; start += SCAN_THREADS) {
        size_t i = start + threadIdx.x;
        unsigned v = i < tiles ? row[i] : 0u;
        unsigned x = v;
        for (int o = 1; o < 32; o <<= 1) {
            unsigned y = __shfl_up_sync(0xffffffffu, x, o);
            if (lane >= o) x += y;
        }
        if (lane == 31) warp_sums[warp] = x;
        __syncthreads();
        if (warp == 0) {
            unsigned s = warp_sums[lane];
            for (int o = 1; o < 32; o <<= 1) {
                unsigned y = __shfl_up_sync(0xffffffffu, s, o);
                if (lane >= o) s += y;
            }
            warp_sums[lane] = s;
        }
        __syncthreads();
        unsigned prefix = carry + (warp > 0 ? warp_sums[warp - 1] : 0u);
        if (i < tiles) row[i] = prefix + x - v;
        __syncthreads();
        if (threadIdx.x == SCAN_THREADS - 1) carry = prefix + x;
        __syncthreads();
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

__global__ void digit_base_kernel(const unsigned* totals, unsigned* base) {
    unsigned sum = 0;
    for (int d = 0; d < RADIX; ++d) {
        base[d] = sum;
        sum += totals[d];
    }
}

template <bool PAIRS>
__global__ void scatter_kernel(const int* __restrict__ keys_in, const int* __restrict__ vals_in,
                               int* __restrict__ keys_out, int* __restrict__ vals_out,
                               const unsigned* __restrict__ offsets, const unsigned* __restrict__ base, size_t n,
                               size_t tiles, int shift) {
    __shared__ unsigned running[RADIX];
    __shared__ unsigned warp_counts[WARPS][RADIX];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    running[threadIdx.x] = base[threadIdx.x] + offsets[threadIdx.x * tiles + blockIdx.x];
    const size_t tile_base = blockIdx.x * (size_t)TILE;
    for (int r = 0; r < ITEMS; ++r) {
        for (int d = threadIdx.x; d < WARPS * RADIX; d += THREADS) (&warp_counts[0][0])[d] = 0;
        __syncthreads();
        size_t i = tile_base + (size_t)r * THREADS + threadIdx.x;
        bool valid = i < n;
        int key = valid ? keys_in[i] : 0;
        int val = PAIRS && valid ? vals_in[i] : 0;
        unsigned dg = digit_of(key, shift);
        // Lanes past n get a label no digit has, so they match nobody.
        unsigned peers = __match_any_sync(0xffffffffu, valid ? dg : RADIX + lane);
        unsigned lower = peers & ((1u << lane) - 1u);
        unsigned rank = __popc(peers & ~lower) - 1u;
        if (valid && lower == 0) warp_counts[warp][dg] = __popc(peers);
        __syncthreads();
        if (valid) {
            unsigned before = 0;
            for (int w = 0; w < warp; ++w) before += warp_counts[w][dg];
            size_t pos = (size_t)running[dg] + before + rank;
            keys_out[pos] = key;
            if (PAIRS) vals_out[pos] = val;
        }
        __syncthreads();
        unsigned add = 0;
        for (int w = 0; w < WARPS; ++w) add += warp_counts[w][threadIdx.x];
        running[threadIdx.x] += add;
        __syncthreads();
    }
}

template <bool PAIRS>
static void radix_sort(const int* keys, const int* vals, int* keys_out, int* vals_out, size_t n) {
    if (n == 0) return;
    size_t tiles = (n + TILE - 1) / TILE;
    int *key_tmp = nullptr, *val_tmp = nullptr;
    unsigned *counts = nullptr, *aux = nullptr;
    cudaMalloc(&key_tmp, n * sizeof(int));
    if (PAIRS) cudaMalloc(&val_tmp, n * sizeof(int));
    cudaMalloc(&counts, RADIX * tiles * sizeof(unsigned));
    cudaMalloc(&aux, 2 * RADIX * sizeof(unsigned));
    // Ping-pong: input -> tmp -> out -> tmp -> out, so the fourth pass lands in the output.
    for (int pass = 0; pass < 4; ++pass) {
        const int* ks = pass == 0 ? keys : (pass % 2 ? key_tmp : keys_out);
        const int* vs = pass == 0 ? vals : (pass % 2 ? val_tmp : vals_out);
        int* kd = pass % 2 ? keys_out : key_tmp;
        int* vd = pass % 2 ? vals_out : val_tmp;
        int shift = 8 * pass;
        histogram_kernel<<<(unsigned)tiles, THREADS>>>(ks, counts, n, tiles, shift);
        scan_rows_kernel<<<RADIX, SCAN_THREADS>>>(counts, aux, tiles);
        digit_base_kernel<<<1, 1>>>(aux, aux + RADIX);
        scatter_kernel<PAIRS><<<(unsigned)tiles, THREADS>>>(ks, vs, kd, vd, counts, aux + RADIX, n, tiles, shift);
    }
    cudaFree(key_tmp);
    if (PAIRS) cudaFree(val_tmp);
    cudaFree(counts);
    cudaFree(aux);
}

extern "C" void solution(const int* keys, const int* values, int* keys_out, int* values_out, size_t n) {
    radix_sort<true>(keys, values, keys_out, values_out, n);
}
