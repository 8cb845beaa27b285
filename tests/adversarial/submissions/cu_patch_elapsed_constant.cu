// Class: impossible_time
// §6: impossible times: zero, negative, NaN, below the physical floor, collapsing an aggregate
// Attack: a library constructor overwrites the entry points of both libcudart's cudaEventElapsedTime and the
// driver's cuEventElapsedTime(_v2) with a jump to a function that reports 0.5 µs for every interval, whatever
// ran. The computation is honest; every sample of the big cases then reads far under the physical floor.
// Outcome required: the floor check (implausible_time), the calibration spin (integrity), or a harness the
// patch cannot reach (true cost).
#include <cstdint>
#include <cstring>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime.h>

static int constant_elapsed(float* ms, void*, void*) {
    if (ms != nullptr) *ms = 0.0005f;
    return 0;
}

static bool write_jump(void* target, void* destination) {
#if defined(__x86_64__)
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t begin = reinterpret_cast<uintptr_t>(target) & ~static_cast<uintptr_t>(page - 1);
    uintptr_t end = reinterpret_cast<uintptr_t>(target) + 12;
    size_t length = end - begin;
    if (mprotect(reinterpret_cast<void*>(begin), length, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
    unsigned char code[12] = {0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xE0};
    uint64_t address = reinterpret_cast<uint64_t>(destination);
    std::memcpy(code + 2, &address, sizeof address);
    std::memcpy(target, code, sizeof code);
    mprotect(reinterpret_cast<void*>(begin), length, PROT_READ | PROT_EXEC);
    __builtin___clear_cache(static_cast<char*>(target), static_cast<char*>(target) + sizeof code);
    return true;
#else
    (void)target;
    (void)destination;
    return false;
#endif
}

static void patch_symbols(void* library, const char* const* names, int count) {
    if (library == nullptr) return;
    for (int i = 0; i < count; ++i) {
        void* symbol = dlsym(library, names[i]);
        if (symbol != nullptr) write_jump(symbol, reinterpret_cast<void*>(&constant_elapsed));
    }
}

__attribute__((constructor)) static void patch_event_timing() {
    const char* runtime_names[] = {"cudaEventElapsedTime", "cudaEventElapsedTime_v2"};
    const char* runtimes[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    for (const char* name : runtimes) patch_symbols(dlopen(name, RTLD_NOW | RTLD_NOLOAD), runtime_names, 2);
    const char* driver_names[] = {"cuEventElapsedTime", "cuEventElapsedTime_v2"};
    patch_symbols(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), driver_names, 2);
}

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
