// Honest, host-bound: stages both inputs through pinned host memory, adds them on the host, and copies the sum
// back; every copy is waited for inside the call.
#include <cuda_runtime.h>

static float* host_a = nullptr;
static float* host_b = nullptr;
static size_t capacity = 0;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    if (n > capacity) {
        if (host_a) cudaFreeHost(host_a);
        if (host_b) cudaFreeHost(host_b);
        cudaMallocHost(&host_a, n * sizeof(float));
        cudaMallocHost(&host_b, n * sizeof(float));
        capacity = n;
    }
    cudaMemcpyAsync(host_a, input_a, n * sizeof(float), cudaMemcpyDeviceToHost, 0);
    cudaMemcpyAsync(host_b, input_b, n * sizeof(float), cudaMemcpyDeviceToHost, 0);
    cudaStreamSynchronize(0);
    for (size_t i = 0; i < n; ++i) host_a[i] += host_b[i];
    cudaMemcpyAsync(output_c, host_a, n * sizeof(float), cudaMemcpyHostToDevice, 0);
    cudaStreamSynchronize(0);
}
