// Writes through a wild pointer: the kernel faults with an illegal memory access.
#include <cuda_runtime.h>

__global__ void wild(float* out) {
    float* p = reinterpret_cast<float*>(0x10);
    *p = out[0];
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    wild<<<1, 1>>>(output_c);
}
