// One thread per output (a grid-stride loop): the largest real voxel of the dilated window. D is the fast axis.
#include <cuda_runtime.h>
#include <math.h>

__global__ void max_pool3d_kernel(const float* __restrict__ in, float* __restrict__ out, long long h, long long w,
                                  long long d, size_t h_out, size_t w_out, size_t d_out, int k, int s, int p,
                                  int dil) {
    const size_t total = h_out * w_out * d_out;
    for (size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x; o < total; o += (size_t)gridDim.x * blockDim.x) {
        long long d0 = (long long)(o % d_out) * s - p;
        long long w0 = (long long)((o / d_out) % w_out) * s - p;
        long long h0 = (long long)(o / (d_out * w_out)) * s - p;
        float best = -INFINITY;
        for (int a = 0; a < k; ++a) {
            long long ih = h0 + (long long)a * dil;
            if (ih < 0 || ih >= h) continue;
            for (int b = 0; b < k; ++b) {
                long long iw = w0 + (long long)b * dil;
                if (iw < 0 || iw >= w) continue;
                const float* row = in + (ih * w + iw) * d;
                for (int c = 0; c < k; ++c) {
                    long long id = d0 + (long long)c * dil;
                    if (id >= 0 && id < d) best = fmaxf(best, row[id]);
                }
            }
        }
        out[o] = best;
    }
}

static size_t out_size(size_t n, int k, int s, int p, int d) {
    long long span = (long long)n + 2LL * p - (long long)d * (k - 1) - 1;
    return span < 0 ? 0 : (size_t)(span / s + 1);
}

extern "C" void solution(const float* input, int kernel_size, int stride, int padding, int dilation, float* output,
                         size_t H, size_t W, size_t D) {
    size_t h_out = out_size(H, kernel_size, stride, padding, dilation);
    size_t w_out = out_size(W, kernel_size, stride, padding, dilation);
    size_t d_out = out_size(D, kernel_size, stride, padding, dilation);
    size_t total = h_out * w_out * d_out;
    if (total == 0) return;
    size_t blocks = (total + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    max_pool3d_kernel<<<(unsigned)blocks, 256>>>(input, output, (long long)H, (long long)W, (long long)D, h_out, w_out,
                                                 d_out, kernel_size, stride, padding, dilation);
}
