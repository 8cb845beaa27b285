// Honest, host-bound: four std::threads each launch a quarter of the work on the legacy default stream, and are
// joined before the call returns.
#include <cuda_runtime.h>
#include <thread>
#include <vector>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

static unsigned blocks_for(size_t n) {
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : (blocks ? blocks : 1));
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    size_t step = (n + 3) / 4;
    std::vector<std::thread> threads;
    for (size_t start = 0; start < n; start += step) {
        size_t count = start + step > n ? n - start : step;
        threads.emplace_back([=] {
            add_kernel<<<blocks_for(count), 256, 0, cudaStreamLegacy>>>(input_a + start, input_b + start,
                                                                         output_c + start, count);
        });
    }
    for (auto& thread : threads) thread.join();
}
