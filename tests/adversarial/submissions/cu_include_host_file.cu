// Class: host_access
// §6: reading secrets, environment, other jobs' files or the parent's /proc; network; sitecustomize.py or cache
//     poisoning; compile-time #include or .incbin of host files
// Attack: #include of a host file, so the compiler's diagnostics quote it in the compile log sent back to the
// competitor. nvcc runs in the sandbox with a synthetic /etc/passwd: a compile error, and no line of the host's
// own file in the log.
#include "/etc/passwd"

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {}
