// Class: weak_output
// §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
// Attack: a data race that passes once in a while. Each thread stages a + b in shared memory and then publishes
// the value staged by the thread 128 slots away (another warp), with the __syncthreads() that would order the two
// deliberately left out. When that warp's loads return late, the value read is stale shared memory from an
// earlier block. It may pass a single check on a lucky run; every timed output is verified: a wrong answer.
#include <cuda_runtime.h>

__global__ void racy_add(const float* a, const float* b, float* c, size_t n) {
    __shared__ float staged[256];
    size_t base = (size_t)blockIdx.x * 256;
    int t = threadIdx.x;
    size_t i = base + t;
    staged[t] = i < n ? a[i] + b[i] : 0.0f;
    // No __syncthreads() here: that is the race.
    int source = (t + 128) & 255;
    size_t j = base + source;
    if (j < n) c[j] = staged[source];
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    size_t blocks = (n + 255) / 256;
    racy_add<<<(unsigned)blocks, 256>>>(input_a, input_b, output_c, n);
}
