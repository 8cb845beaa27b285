// Class: harness_patch
// §6: patching timers, synchronize, the stats code or the result channel, from Python or native code
// Attack: symbol interposition on the CUDA runtime: the library defines and exports cudaEventElapsedTime
// (reporting 1 µs), cudaEventSynchronize and cudaDeviceSynchronize (returning at once). With the runner's fixed
// nvcc flags the static cudart is linked into every library and already defines these names, so the link fails:
// a compile error, and nothing is loaded at all. (Should the flags ever change to a shared cudart, this entry
// must move to the GPU and expect the true cost: the library is loaded RTLD_LOCAL, after the harness bound
// its symbols.)
#include <cuda_runtime.h>

extern "C" __attribute__((visibility("default"))) cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
    if (ms != nullptr) *ms = 0.001f;
    return cudaSuccess;
}

extern "C" __attribute__((visibility("default"))) cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }

extern "C" __attribute__((visibility("default"))) cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    vector_add_kernel<<<(unsigned)((n + 255) / 256), 256>>>(input_a, input_b, output_c, n);
}
