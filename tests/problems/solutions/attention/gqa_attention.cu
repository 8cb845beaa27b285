// Grouped-query causal attention in float32: a block of 8 warps takes 8 query rows of one query head, stages 32-key
// tiles of its shared K/V head (h / (Hq / Hkv)) in shared memory, and keeps an online softmax per row. Any S and D.
#include <cuda_runtime.h>
#include <math.h>

#define WARPS 8
#define TK 32

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void attention_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                 float* __restrict__ out, size_t hq, size_t hkv, size_t s, size_t d, size_t tiles,
                                 float scale) {
    extern __shared__ float smem[];
    float* qs = smem;                      // [WARPS][d], pre-scaled queries
    float* acc = qs + WARPS * d;           // [WARPS][d], unnormalised outputs
    float* ks = acc + WARPS * d;           // [TK][d + 1], padded against bank conflicts
    float* vs = ks + TK * (d + 1);         // [TK][d]
    float* ps = vs + TK * d;               // [WARPS][TK], this tile's probabilities

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t head = blockIdx.x / tiles;
    const size_t first = (blockIdx.x % tiles) * WARPS;
    const size_t row = first + warp;
    // Keys past the block's last row are masked for every row in it.
    const size_t kend = first + WARPS < s ? first + WARPS : s;
    const bool valid = row < s;
    const float* qh = q + head * s * d;
    // head = b * hq + h; its key/value head is b * hkv + h / (hq / hkv).
    const size_t kv_head = head / hq * hkv + head % hq / (hq / hkv);
    const float* kh = k + kv_head * s * d;
    const float* vh = v + kv_head * s * d;

    float* my_q = qs + warp * d;
    float* my_acc = acc + warp * d;
    for (size_t c = lane; c < d; c += 32) {
        my_q[c] = valid ? qh[row * d + c] * scale : 0.0f;
        my_acc[c] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;

    for (size_t j0 = 0; j0 < kend; j0 += TK) {
        for (size_t idx = threadIdx.x; idx < TK * d; idx += blockDim.x) {
            size_t r = idx / d, c = idx % d, j = j0 + r;
            ks[r * (d + 1) + c] = j < s ? kh[j * d + c] : 0.0f;
            vs[r * d + c] = j < s ? vh[j * d + c] : 0.0f;
        }
        __syncthreads();
        if (valid) {
            size_t j = j0 + lane;
            // Key 0 is in the first tile and always visible, so the running max is finite from then on.
            bool seen = j < s && j <= row;
            float score = -INFINITY;
            if (seen) {
                float dot = 0.0f;
                const float* kr = ks + lane * (d + 1);
                for (size_t c = 0; c < d; ++c) dot += my_q[c] * kr[c];
                score = dot;
            }
            float m_new = fmaxf(m, warp_max(score));
            float p = seen ? expf(score - m_new) : 0.0f;
            float corr = expf(m - m_new);
            l = l * corr + warp_sum(p);
            ps[warp * TK + lane] = p;
            __syncwarp();
            for (size_t c = lane; c < d; c += 32) {
                float a = my_acc[c] * corr;
                for (int t = 0; t < TK; ++t) a += ps[warp * TK + t] * vs[t * d + c];
                my_acc[c] = a;
            }
            m = m_new;
        }
        __syncthreads();
    }
    if (valid) {
        float inv = 1.0f / l;
        for (size_t c = lane; c < d; c += 32) out[head * s * d + row * d + c] = my_acc[c] * inv;
    }
}

extern "C" void solution(const float* Q, const float* K, const float* V, float* output, size_t B, size_t Hq, size_t Hkv,
                         size_t S, size_t D) {
    size_t tiles = (S + WARPS - 1) / WARPS;
    size_t blocks = B * Hq * tiles;
    size_t smem = (2 * WARPS * D + TK * (D + 1) + TK * D + WARPS * TK) * sizeof(float);
    if (smem > 48 * 1024) cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    attention_kernel<<<(unsigned)blocks, WARPS * 32, smem>>>(Q, K, V, output, Hq, Hkv, S, D, tiles, 1.0f / sqrtf((float)D));
}
