// Class: stream_or_thread
// §6: work on another stream or host thread, finishing after the stop event
// Attack: the kernel goes to a stream created with cudaStreamNonBlocking, which never synchronises with the
// legacy default stream that holds the START and STOP events, and it spins ~20 µs before writing. solution()
// returns at once, so STOP is recorded while the real work has not even started. A device-wide sync still sees
// a correct output; the on-stream snapshot taken right after STOP does not.
#include <cuda_runtime.h>

__global__ void late_add(const float* a, const float* b, float* c, size_t n) {
    long long start = clock64();
    while (clock64() - start < 40000) {
    }
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

static cudaStream_t side_stream = nullptr;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    if (side_stream == nullptr) cudaStreamCreateWithFlags(&side_stream, cudaStreamNonBlocking);
    const int threads = 256;
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 2048) blocks = 2048;
    late_add<<<(unsigned)blocks, threads, 0, side_stream>>>(input_a, input_b, output_c, n);
}
