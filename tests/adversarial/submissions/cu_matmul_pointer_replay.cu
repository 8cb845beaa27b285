// Class: cache_replay
// §6: caching or replaying results across calls or inputs; returning an input or a reference buffer
// Attack: matmul results cached by the addresses of A, B and C. The first call on a set of buffers multiplies
// (naively) and keeps a device copy of C; every later call on the same buffers replays it with one
// device-to-device copy, O(n^2) instead of O(n^3). Fresh inputs before every timed call make the replay wrong.
#include <map>
#include <tuple>

#include <cuda_runtime.h>

__global__ void matmul_kernel(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (size_t i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
}

using Key = std::tuple<const float*, const float*, float*, size_t, size_t, size_t>;
static std::map<Key, float*> replays;

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t n, size_t k) {
    Key key{input_a, input_b, output_c, m, n, k};
    size_t bytes = m * n * sizeof(float);
    auto found = replays.find(key);
    if (found != replays.end()) {
        cudaMemcpyAsync(output_c, found->second, bytes, cudaMemcpyDeviceToDevice, 0);
        return;
    }
    dim3 block(16, 16);
    dim3 grid((unsigned)((n + block.x - 1) / block.x), (unsigned)((m + block.y - 1) / block.y));
    matmul_kernel<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
    float* copy = nullptr;
    if (cudaMalloc(&copy, bytes) == cudaSuccess) {
        cudaMemcpyAsync(copy, output_c, bytes, cudaMemcpyDeviceToDevice, 0);
        replays[key] = copy;
    }
}
