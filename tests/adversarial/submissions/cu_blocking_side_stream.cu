// Class: stream_or_thread
// §6: work on another stream or host thread, finishing after the stop event
// Attempt: the kernel goes to a side stream made with plain cudaStreamCreate. Such a stream is *blocking*: the
// legacy default stream waits for it, so STOP (recorded on the legacy stream after this launch) cannot complete
// before the kernel does. The side stream buys nothing; the run must pass and be timed at its true cost.
#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

static cudaStream_t side_stream = nullptr;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    if (side_stream == nullptr) cudaStreamCreate(&side_stream);
    const int threads = 256;
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads, 0, side_stream>>>(input_a, input_b, output_c, n);
}
