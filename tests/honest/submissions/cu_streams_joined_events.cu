// Honest: two non-blocking streams, each waiting for the default stream and joined back with events.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

static unsigned blocks_for(size_t n) {
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

static cudaStream_t streams[2];
static cudaEvent_t fork_event, join_events[2];
static bool ready = false;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    if (!ready) {
        for (int s = 0; s < 2; ++s) {
            cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking);
            cudaEventCreateWithFlags(&join_events[s], cudaEventDisableTiming);
        }
        cudaEventCreateWithFlags(&fork_event, cudaEventDisableTiming);
        ready = true;
    }
    cudaEventRecord(fork_event, 0);
    size_t half = n / 2;
    for (int s = 0; s < 2; ++s) {
        size_t start = s == 0 ? 0 : half, count = s == 0 ? half : n - half;
        cudaStreamWaitEvent(streams[s], fork_event, 0);
        add_kernel<<<blocks_for(count), 256, 0, streams[s]>>>(input_a + start, input_b + start, output_c + start, count);
        cudaEventRecord(join_events[s], streams[s]);
        cudaStreamWaitEvent(0, join_events[s], 0);
    }
}
