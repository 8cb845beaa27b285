// Class: deferred_work
// §6: lazy or deferred outputs; batch-and-skip across calls; computing before the start event
// Attack: an output buffer seen for the first time is computed at once (that call is probably checked). Later
// calls are queued, and every fourth call launches the whole batch, so three timed calls in four launch
// nothing. It relies on outputs keeping their values between calls; a poisoned output and fresh inputs before
// every timed call, each verified, make it a wrong answer.
#include <unordered_set>
#include <vector>

#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

struct PendingCall {
    const float* a;
    const float* b;
    float* c;
    size_t n;
};

static std::unordered_set<float*> seen;
static std::vector<PendingCall> batch;

static void launch(const PendingCall& call) {
    const int threads = 256;
    size_t blocks = (call.n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads>>>(call.a, call.b, call.c, call.n);
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    PendingCall call{input_a, input_b, output_c, n};
    if (seen.insert(output_c).second) {
        launch(call);
        return;
    }
    batch.push_back(call);
    if (batch.size() >= 4) {
        for (const PendingCall& pending : batch) launch(pending);
        batch.clear();
    }
}
