// One block per row, k rounds: round r finds the largest value below the one found in round r - 1 (values
// never tie within a row), with a block-wide (value, index) max reduction. Rows that fit in shared memory are
// read from global memory once.
#include <cuda_runtime.h>
#include <climits>

constexpr int THREADS = 256;
constexpr size_t SHARED_LIMIT = 12 * 1024;  // floats: 48 KiB

__device__ __forceinline__ void take_larger(float& best, int& at, float v, int j) {
    if (v > best || (v == best && j < at)) { best = v; at = j; }
}

template <bool kShared>
__global__ void topk_rows(const float* __restrict__ x, float* __restrict__ values, int* __restrict__ indices,
                          size_t m, size_t k) {
    extern __shared__ float row_cache[];
    __shared__ float warp_best[THREADS / 32];
    __shared__ int warp_at[THREADS / 32];
    __shared__ float found_value;
    __shared__ int found_at;
    const float* row = x + blockIdx.x * m;
    if (kShared) {
        for (size_t j = threadIdx.x; j < m; j += THREADS) row_cache[j] = row[j];
        __syncthreads();
    }
    const float* src = kShared ? row_cache : row;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float below = INFINITY;
    for (size_t r = 0; r < k; ++r) {
        float best = -INFINITY;
        int at = INT_MAX;
        for (size_t j = threadIdx.x; j < m; j += THREADS) {
            float v = src[j];
            if (v < below) take_larger(best, at, v, (int)j);
        }
        for (int d = 16; d > 0; d >>= 1) {
            float v = __shfl_down_sync(0xffffffffu, best, d);
            int j = __shfl_down_sync(0xffffffffu, at, d);
            take_larger(best, at, v, j);
        }
        if (lane == 0) { warp_best[warp] = best; warp_at[warp] = at; }
        __syncthreads();
        if (warp == 0) {
            best = lane < THREADS / 32 ? warp_best[lane] : -INFINITY;
            at = lane < THREADS / 32 ? warp_at[lane] : INT_MAX;
            for (int d = 16; d > 0; d >>= 1) {
                float v = __shfl_down_sync(0xffffffffu, best, d);
                int j = __shfl_down_sync(0xffffffffu, at, d);
                take_larger(best, at, v, j);
            }
            if (lane == 0) {
                found_value = best;
                found_at = at;
                values[blockIdx.x * k + r] = best;
                indices[blockIdx.x * k + r] = at;
            }
        }
        __syncthreads();
        below = found_value;
        __syncthreads();  // every thread has read found_value before round r + 1 overwrites it
    }
}

extern "C" void solution(const float* input, float* values, int* indices, size_t n, size_t m, size_t k) {
    if (n == 0 || k == 0) return;
    if (m <= SHARED_LIMIT) {
        topk_rows<true><<<(unsigned)n, THREADS, m * sizeof(float)>>>(input, values, indices, m, k);
    } else {
        topk_rows<false><<<(unsigned)n, THREADS>>>(input, values, indices, m, k);
    }
}
