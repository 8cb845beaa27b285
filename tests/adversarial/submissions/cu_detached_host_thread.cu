// Class: stream_or_thread
// §6: work on another stream or host thread, finishing after the stop event
// Attack: solution() hands the launch to a detached std::thread that sleeps 200 µs first, so the kernel is
// enqueued after the harness has recorded STOP. The thread is still alive when solution() returns, the snapshot
// taken after STOP differs from the output, or the output is still poisoned when it is verified.
#include <chrono>
#include <thread>

#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    std::thread([=] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        const int threads = 256;
        size_t blocks = (n + threads - 1) / threads;
        if (blocks > 65535 * 8) blocks = 65535 * 8;
        vector_add_kernel<<<(unsigned)blocks, threads>>>(input_a, input_b, output_c, n);
    }).detach();
}
