// Class: resource_abuse
// §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
// Attack: a kernel that never ends (it spins on the SM clock, which the compiler cannot prove finite). The host
// blocks in the first synchronisation; the phase deadline kills the process group: a timeout.
#include <cuda_runtime.h>

__global__ void never_ends(float* c) {
    for (;;) {
        if (clock64() == -1) c[0] = 0.0f;
    }
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    never_ends<<<1, 1>>>(output_c);
}
