// Each thread owns CHUNK consecutive outputs: it sums its first window directly, then slides the window one
// position at a time (add the element entering, subtract the one leaving). Double accumulators keep the
// slide's rounding from building up over the chunk. Positions outside [0, N) count as zero.
#include <cuda_runtime.h>

constexpr size_t CHUNK = 128;

__global__ void running_sum(const float* __restrict__ x, size_t w, float* __restrict__ y, size_t n) {
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t start = t * CHUNK;
    if (start >= n) return;
    size_t end = start + CHUNK < n ? start + CHUNK : n;
    size_t half = w / 2;
    // Window of output i: [i - half, i + half], clipped to [0, n).
    size_t lo = start > half ? start - half : 0;
    size_t hi = start + half + 1 < n ? start + half + 1 : n;  // exclusive
    double acc = 0.0;
    for (size_t j = lo; j < hi; ++j) acc += (double)x[j];
    y[start] = (float)acc;
    for (size_t i = start + 1; i < end; ++i) {
        size_t entering = i + half;  // joins the window at i
        if (entering < n) acc += (double)x[entering];
        if (i >= half + 1) acc -= (double)x[i - half - 1];  // left the window at i
        y[i] = (float)acc;
    }
}

extern "C" void solution(const float* input, size_t W, float* output, size_t N) {
    if (N == 0) return;
    size_t threads = (N + CHUNK - 1) / CHUNK;
    running_sum<<<(unsigned)((threads + 127) / 128), 128>>>(input, W, output, N);
}
