// Class: resource_abuse
// §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
// Attack: writes through a wild device pointer: the kernel faults with an illegal memory access, which poisons the
// CUDA context for good. The job ends with a clean error naming it; the next job gets a fresh context.
#include <cuda_runtime.h>

__global__ void wild_write(const float* a, float* c) {
    float* wild = reinterpret_cast<float*>(0x10);
    *wild = a[0];
    c[0] = a[0];
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    wild_write<<<1, 1>>>(input_a, output_c);
}
