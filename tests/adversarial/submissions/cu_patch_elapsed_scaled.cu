// Class: harness_patch
// §6: patching timers, synchronize, the stats code or the result channel, from Python or native code
// Attack: a library constructor, run while the launcher loads the library, finds libcudart's
// cudaEventElapsedTime (dlopen with RTLD_NOLOAD, so only the copy already loaded by the harness) and overwrites
// its first bytes with a jump (mprotect, then `movabs rax, fake; jmp rax`). The fake asks the driver's own
// cuEventElapsedTime for the true time and reports 60 % of it: never zero, never under the physical floor,
// just quietly 1.67x faster. The computation is honest.
// Outcome required: the calibration spin (a kernel of known duration timed through the same events) reads 60 %
// of its length (integrity), or the harness times through something the patch does not reach (true cost).
#include <cstdint>
#include <cstring>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime.h>

typedef int (*ElapsedFn)(float*, void*, void*);
static ElapsedFn driver_elapsed = nullptr;

static int scaled_elapsed(float* ms, void* start, void* stop) {
    if (driver_elapsed == nullptr) return 1;  // cudaErrorInvalidValue
    int status = driver_elapsed(ms, start, stop);
    if (status == 0 && ms != nullptr) *ms *= 0.6f;
    return status;
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

__attribute__((constructor)) static void patch_event_timing() {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_NOW);
    if (driver == nullptr) return;
    driver_elapsed = reinterpret_cast<ElapsedFn>(dlsym(driver, "cuEventElapsedTime_v2"));
    if (driver_elapsed == nullptr) driver_elapsed = reinterpret_cast<ElapsedFn>(dlsym(driver, "cuEventElapsedTime"));
    if (driver_elapsed == nullptr) return;
    const char* runtimes[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    for (const char* name : runtimes) {
        void* runtime = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
        if (runtime == nullptr) continue;
        void* elapsed = dlsym(runtime, "cudaEventElapsedTime");
        if (elapsed != nullptr) write_jump(elapsed, reinterpret_cast<void*>(&scaled_elapsed));
    }
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
