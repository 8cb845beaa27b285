// Class: harness_patch
// §6: patching timers, synchronize, the stats code or the result channel, from Python or native code
// Attack: symbol interposition. The library exports its own cuEventElapsedTime(_v2) (reporting 1 µs),
// cuEventSynchronize, cuStreamSynchronize and cuCtxSynchronize (returning at once), hoping the harness resolves
// them instead of the driver's. The library is loaded RTLD_LOCAL after the harness has bound its own symbols, and
// the CUDA runtime reaches the driver through cuGetProcAddress, so nothing should resolve to these. The kernel
// is honest: the run must be timed at its true cost.
// (The runtime names, cudaEventElapsedTime and friends, cannot even be defined: nvcc links the static cudart,
// which already defines them; see cu_interpose_runtime_symbols.cu.)
#include <cuda_runtime.h>

#define EXPORTED extern "C" __attribute__((visibility("default")))

EXPORTED int cuEventElapsedTime(float* ms, void*, void*) {
    if (ms != nullptr) *ms = 0.001f;
    return 0;
}
EXPORTED int cuEventElapsedTime_v2(float* ms, void*, void*) {
    if (ms != nullptr) *ms = 0.001f;
    return 0;
}
EXPORTED int cuEventSynchronize(void*) { return 0; }
EXPORTED int cuStreamSynchronize(void*) { return 0; }
EXPORTED int cuCtxSynchronize(void) { return 0; }

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const int threads = 256;
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads>>>(input_a, input_b, output_c, n);
}
