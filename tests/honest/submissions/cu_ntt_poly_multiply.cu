// poly-multiply-ff by number-theoretic transforms: O(n log n) work where the problem's formula counts 2·n².
// 2^31 − 1 has no large power-of-two root of unity, so the product is taken modulo three NTT-friendly primes
// below 2^30 and recombined by the Chinese remainder theorem (Garner). A true coefficient is below
// n·(2^31 − 1)² < 2^84 for n ≤ 2^22, under the primes' product (about 2^86), so the recombination is exact.
//
// Four launches on the default stream, for N = 2^L ≥ 2n − 1 points, T = min(N, 2048) points per tile:
//   1. forward, outer stages (butterfly spans ≥ T): columns of a T-strided view, in shared memory; reads the
//      inputs, reduced modulo each prime, zero-padded to N;
//   2. forward, inner stages (spans < T): contiguous tiles of T points;
//   3. the pointwise product of the two spectra, then the inverse's inner stages;
//   4. the inverse's outer stages for all three primes, the scale by 1/N, Garner's recombination, the output.
// The forward transform is decimation in frequency (natural order in, bit-reversed out), the inverse decimation
// in time (bit-reversed in, natural out), so no reordering pass is needed. Residues stay in [0, q);
// twiddles are kept in Montgomery form (w·2^32 mod q), so x·w mod q is one Montgomery product, and stored by
// stage: the twiddles w_2h^j (j < h) of span h sit at [h, 2h), so the threads of a warp read consecutive words.
//
// The per-block work is written as host-and-device functions whose loops stride by (tid, threads) and whose
// barriers vanish on the host: run with one thread, they compute the same thing sequentially, which is how
// tests/honest/test_ntt_host.py checks this file's arithmetic without a GPU.
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

namespace ntt {

constexpr int kPrimes = 3;
constexpr uint32_t kQ[kPrimes] = {998244353u, 167772161u, 469762049u};  // c·2^k + 1, k = 23, 25, 26
constexpr uint32_t kGenerator = 3;                                        // generates each multiplicative group
constexpr uint64_t kP = 2147483647ull;
constexpr int kMaxLog = 23;       // the smallest two-adicity of the three primes
constexpr int kTileLog = 11;      // inner tiles of 2048 points (8 KiB of shared memory)
constexpr int kBlockPoints = 2048;  // points per outer block (columns × rows), at least one column
constexpr int kThreads = 256;
// Garner's inverses: q0^-1 mod q1, q0^-1 mod q2, q1^-1 mod q2.
constexpr uint64_t kInvQ0ModQ1 = 47450712ull, kInvQ0ModQ2 = 208783132ull, kInvQ1ModQ2 = 104391568ull;

#ifdef __CUDA_ARCH__
#define NTT_BARRIER() __syncthreads()
#else
#define NTT_BARRIER() ((void)0)
#endif

// What every launch needs to know about one transform size.
struct Plan {
    int log_n;        // L: N = 2^L points
    int tile_log;     // t = min(L, 11): inner tiles of T = 2^t points
    uint32_t rows;    // R = N / T: points per column of the outer stages
    uint32_t cols;    // C: columns per outer block
    uint32_t col_blocks;  // T / C outer blocks per transform
    uint32_t tiles;       // N / T inner blocks per transform
};

// Twiddles per table: N (entry 0 unused; spans 1 .. N/2 fill [1, N)).
__host__ __device__ inline uint32_t table_size(const Plan& p) { return 1u << p.log_n; }

inline Plan plan_for(size_t n) {
    size_t length = 2 * n - 1;
    int log_n = 0;
    while ((size_t(1) << log_n) < length) ++log_n;
    Plan p;
    p.log_n = log_n;
    p.tile_log = log_n < kTileLog ? log_n : kTileLog;
    uint32_t tile = 1u << p.tile_log;
    p.rows = 1u << (log_n - p.tile_log);
    uint32_t cols = p.rows >= kBlockPoints ? 1u : kBlockPoints / p.rows;
    p.cols = cols < tile ? cols : tile;
    p.col_blocks = tile / p.cols;
    p.tiles = 1u << (log_n - p.tile_log);
    return p;
}

// Montgomery arithmetic modulo q < 2^30 with R = 2^32: mont_mul(a, b) = a·b·R^-1 mod q for a, b < q.
struct Mod {
    uint32_t q;
    uint32_t q_neg_inv;  // −q^-1 mod 2^32
};

__host__ __device__ inline uint32_t add_mod(uint32_t a, uint32_t b, uint32_t q) {
    uint32_t s = a + b;
    return s >= q ? s - q : s;
}

__host__ __device__ inline uint32_t sub_mod(uint32_t a, uint32_t b, uint32_t q) {
    return a >= b ? a - b : a + q - b;
}

__host__ __device__ inline uint32_t mont_mul(uint32_t a, uint32_t b, Mod m) {
    uint64_t t = (uint64_t)a * b;                            // < 2^60
    uint32_t k = (uint32_t)t * m.q_neg_inv;
    uint32_t u = (uint32_t)((t + (uint64_t)k * m.q) >> 32);  // < 2q: the sum is below 2^63
    return u >= m.q ? u - m.q : u;
}

// The constants of one call, passed by value to every kernel.
struct Consts {
    Mod mod[kPrimes];
    uint32_t scale[kPrimes];  // N^-1 · R² mod q: undoes the product's R^-1 and divides by N in one step
};

// Device (or host) tables: for each prime a forward table then an inverse one, each by stage (see above).
__host__ __device__ inline const uint32_t* twiddles(const uint32_t* tables, uint32_t size, int prime, int inverse) {
    return tables + ((size_t)prime * 2 + inverse) * size;
}

// -- the per-block work -------------------------------------------------------------------------------------
// Outer stages address point i = c + T·r (column c, row r); a block holds C consecutive columns, all R rows, at
// s[r·C + cc]. A butterfly of span h ≥ T pairs rows r and r + h/T; its twiddle is w_2h^j with j = i mod h.

__host__ __device__ inline void outer_dif(uint32_t* s, const Plan& p, uint32_t c0, const uint32_t* tw, Mod m,
                                          int tid, int threads) {
    const uint32_t tile = 1u << p.tile_log, half_points = p.rows * p.cols / 2;
    for (uint32_t hr = p.rows / 2; hr >= 1; hr /= 2) {  // span h = hr·T, from N/2 down to T
        for (uint32_t k = tid; k < half_points; k += threads) {
            uint32_t cc = k % p.cols, kb = k / p.cols;
            uint32_t r = (kb / hr) * 2 * hr + kb % hr;
            uint32_t j = c0 + cc + tile * (r % hr);
            uint32_t w = tw[hr * tile + j];
            uint32_t* lo = s + r * p.cols + cc;
            uint32_t* hi = lo + hr * p.cols;
            uint32_t u = *lo, v = *hi;
            *lo = add_mod(u, v, m.q);
            *hi = mont_mul(sub_mod(u, v, m.q), w, m);
        }
        NTT_BARRIER();
    }
}

__host__ __device__ inline void outer_dit(uint32_t* s, const Plan& p, uint32_t c0, const uint32_t* itw, Mod m,
                                          int tid, int threads) {
    const uint32_t tile = 1u << p.tile_log, half_points = p.rows * p.cols / 2;
    for (uint32_t hr = 1; hr < p.rows; hr *= 2) {  // span h = hr·T, from T up to N/2
        for (uint32_t k = tid; k < half_points; k += threads) {
            uint32_t cc = k % p.cols, kb = k / p.cols;
            uint32_t r = (kb / hr) * 2 * hr + kb % hr;
            uint32_t j = c0 + cc + tile * (r % hr);
            uint32_t w = itw[hr * tile + j];
            uint32_t* lo = s + r * p.cols + cc;
            uint32_t* hi = lo + hr * p.cols;
            uint32_t u = *lo, v = mont_mul(*hi, w, m);
            *lo = add_mod(u, v, m.q);
            *hi = sub_mod(u, v, m.q);
        }
        NTT_BARRIER();
    }
}

// Inner stages address point i = T·b + o within tile b, at s[o]; a span h < T pairs o and o + h, twiddle
// w_2h^(o mod h).
__host__ __device__ inline void inner_dif(uint32_t* s, const Plan& p, const uint32_t* tw, Mod m, int tid,
                                          int threads) {
    const uint32_t tile = 1u << p.tile_log;
    for (uint32_t h = tile / 2; h >= 1; h /= 2) {
        for (uint32_t k = tid; k < tile / 2; k += threads) {
            uint32_t o = (k / h) * 2 * h + k % h;
            uint32_t w = tw[h + k % h];
            uint32_t u = s[o], v = s[o + h];
            s[o] = add_mod(u, v, m.q);
            s[o + h] = mont_mul(sub_mod(u, v, m.q), w, m);
        }
        NTT_BARRIER();
    }
}

__host__ __device__ inline void inner_dit(uint32_t* s, const Plan& p, const uint32_t* itw, Mod m, int tid,
                                          int threads) {
    const uint32_t tile = 1u << p.tile_log;
    for (uint32_t h = 1; h < tile; h *= 2) {
        for (uint32_t k = tid; k < tile / 2; k += threads) {
            uint32_t o = (k / h) * 2 * h + k % h;
            uint32_t w = itw[h + k % h];
            uint32_t u = s[o], v = mont_mul(s[o + h], w, m);
            s[o] = add_mod(u, v, m.q);
            s[o + h] = sub_mod(u, v, m.q);
        }
        NTT_BARRIER();
    }
}

// Launch 1, one block per (column group, input, prime): load, reduce, pad, forward outer stages.
__host__ __device__ inline void forward_outer_block(const uint32_t* input, size_t n, uint32_t* work,
                                                    const uint32_t* tables, Plan p, Consts k, uint32_t group,
                                                    int which, int prime, uint32_t* s, int tid, int threads) {
    const uint32_t tile = 1u << p.tile_log, points = p.rows * p.cols, c0 = group * p.cols;
    const Mod m = k.mod[prime];
    for (uint32_t e = tid; e < points; e += threads) {
        size_t i = c0 + e % p.cols + (size_t)tile * (e / p.cols);
        s[e] = i < n ? input[i] % m.q : 0u;
    }
    NTT_BARRIER();
    outer_dif(s, p, c0, twiddles(tables, table_size(p), prime, 0), m, tid, threads);
    uint32_t* out = work + (((size_t)which * kPrimes + prime) << p.log_n);
    for (uint32_t e = tid; e < points; e += threads) out[c0 + e % p.cols + (size_t)tile * (e / p.cols)] = s[e];
}

// Launch 2, one block per (tile, input, prime): forward inner stages.
__host__ __device__ inline void forward_inner_block(uint32_t* work, const uint32_t* tables, Plan p, Consts k,
                                                    uint32_t tile_index, int which, int prime, uint32_t* s, int tid,
                                                    int threads) {
    const uint32_t tile = 1u << p.tile_log;
    uint32_t* x = work + (((size_t)which * kPrimes + prime) << p.log_n) + (size_t)tile_index * tile;
    for (uint32_t e = tid; e < tile; e += threads) s[e] = x[e];
    NTT_BARRIER();
    inner_dif(s, p, twiddles(tables, table_size(p), prime, 0), k.mod[prime], tid, threads);
    for (uint32_t e = tid; e < tile; e += threads) x[e] = s[e];
}

// Launch 3, one block per (tile, prime): the product of the spectra (a·b·R^-1), then the inverse inner stages.
__host__ __device__ inline void inverse_inner_block(uint32_t* work, const uint32_t* tables, Plan p, Consts k,
                                                    uint32_t tile_index, int prime, uint32_t* s, int tid,
                                                    int threads) {
    const uint32_t tile = 1u << p.tile_log;
    const Mod m = k.mod[prime];
    uint32_t* a = work + ((size_t)prime << p.log_n) + (size_t)tile_index * tile;
    const uint32_t* b = work + ((size_t)(kPrimes + prime) << p.log_n) + (size_t)tile_index * tile;
    for (uint32_t e = tid; e < tile; e += threads) s[e] = mont_mul(a[e], b[e], m);
    NTT_BARRIER();
    inner_dit(s, p, twiddles(tables, table_size(p), prime, 1), m, tid, threads);
    for (uint32_t e = tid; e < tile; e += threads) a[e] = s[e];
}

// x mod P from residues mod the three primes, by Garner: x = v0 + q0·v1 + q0·q1·v2 with v1 < q1, v2 < q2.
__host__ __device__ inline uint32_t garner_mod_p(uint32_t r0, uint32_t r1, uint32_t r2) {
    constexpr uint64_t q0 = kQ[0], q1 = kQ[1], q2 = kQ[2];
    static_assert(q0 * kInvQ0ModQ1 % q1 == 1 && q0 * kInvQ0ModQ2 % q2 == 1 && q1 * kInvQ1ModQ2 % q2 == 1,
                  "Garner's inverses");
    uint64_t v0 = r0;
    uint64_t v1 = (r1 + q1 - v0 % q1) % q1 * kInvQ0ModQ1 % q1;
    uint64_t t = (r2 + q2 - v0 % q2) % q2 * kInvQ0ModQ2 % q2;
    uint64_t v2 = (t + q2 - v1) % q2 * kInvQ1ModQ2 % q2;
    uint64_t x = v0 + v1 * (q0 % kP) % kP + v2 * ((q0 * q1) % kP) % kP;  // each term below 2^31
    return (uint32_t)(x % kP);
}

// Launch 4, one block per column group: for each prime the inverse outer stages and the scale, then Garner.
__host__ __device__ inline void inverse_outer_block(const uint32_t* work, uint32_t* output, size_t n,
                                                    const uint32_t* tables, Plan p, Consts k, uint32_t group,
                                                    uint32_t* s, int tid, int threads) {
    const uint32_t tile = 1u << p.tile_log, points = p.rows * p.cols, c0 = group * p.cols;
    for (int prime = 0; prime < kPrimes; ++prime) {
        uint32_t* sp = s + (size_t)prime * points;
        const uint32_t* x = work + ((size_t)prime << p.log_n);
        for (uint32_t e = tid; e < points; e += threads) sp[e] = x[c0 + e % p.cols + (size_t)tile * (e / p.cols)];
        NTT_BARRIER();
        outer_dit(sp, p, c0, twiddles(tables, table_size(p), prime, 1), k.mod[prime], tid, threads);
        for (uint32_t e = tid; e < points; e += threads) sp[e] = mont_mul(sp[e], k.scale[prime], k.mod[prime]);
        NTT_BARRIER();
    }
    const size_t length = 2 * n - 1;
    for (uint32_t e = tid; e < points; e += threads) {
        size_t i = c0 + e % p.cols + (size_t)tile * (e / p.cols);
        if (i < length) output[i] = garner_mod_p(s[e], s[points + e], s[2 * points + e]);
    }
}

// -- host side: constants, tables, workspace ------------------------------------------------------------------

inline uint64_t pow_mod(uint64_t base, uint64_t exp, uint64_t q) {
    uint64_t result = 1;
    base %= q;
    while (exp) {
        if (exp & 1) result = result * base % q;
        base = base * base % q;
        exp >>= 1;
    }
    return result;
}

inline Consts consts_for(const Plan& p) {
    Consts k;
    for (int i = 0; i < kPrimes; ++i) {
        uint32_t q = kQ[i], inv = q;  // Newton's iteration for q^-1 mod 2^32: each step doubles the bits
        for (int it = 0; it < 5; ++it) inv *= 2u - q * inv;
        k.mod[i] = Mod{q, 0u - inv};
        uint64_t r = (1ull << 32) % q;
        uint64_t n_inv = pow_mod(1ull << p.log_n, q - 2, q);
        k.scale[i] = (uint32_t)(n_inv * r % q * r % q);
    }
    return k;
}

// For each prime a forward and an inverse table of N entries: w_2h^j·R mod q at [h + j] for each span h < N,
// j < h, where w_2h = w^(N/2h) and w is a primitive N-th root of unity (its inverse for the inverse table).
inline std::vector<uint32_t> tables_for(const Plan& p) {
    const uint32_t size = table_size(p);
    std::vector<uint32_t> t((size_t)kPrimes * 2 * size, 0u);
    for (int i = 0; i < kPrimes; ++i) {
        uint64_t q = kQ[i], r = (1ull << 32) % q;
        uint64_t w = pow_mod(kGenerator, (q - 1) >> p.log_n, q);
        uint64_t roots[2] = {w, pow_mod(w, q - 2, q)};
        for (int inverse = 0; inverse < 2; ++inverse) {
            uint32_t* table = t.data() + ((size_t)i * 2 + inverse) * size;
            for (uint32_t h = 1; h < size; h *= 2) {
                uint64_t step = pow_mod(roots[inverse], size / (2 * h), q), x = 1;
                for (uint32_t j = 0; j < h; ++j, x = x * step % q) table[h + j] = (uint32_t)(x * r % q);
            }
        }
    }
    return t;
}

inline size_t outer_shared_bytes(const Plan& p, int primes) { return (size_t)primes * p.rows * p.cols * 4; }
inline size_t inner_shared_bytes(const Plan& p) { return ((size_t)1 << p.tile_log) * 4; }

}  // namespace ntt

#ifndef NTT_HOST_ONLY

namespace {

__global__ void forward_outer_kernel(const uint32_t* a, const uint32_t* b, size_t n, uint32_t* work,
                                     const uint32_t* tables, ntt::Plan p, ntt::Consts k) {
    extern __shared__ uint32_t s[];
    ntt::forward_outer_block(blockIdx.y == 0 ? a : b, n, work, tables, p, k, blockIdx.x, blockIdx.y, blockIdx.z, s,
                             threadIdx.x, blockDim.x);
}

__global__ void forward_inner_kernel(uint32_t* work, const uint32_t* tables, ntt::Plan p, ntt::Consts k) {
    extern __shared__ uint32_t s[];
    ntt::forward_inner_block(work, tables, p, k, blockIdx.x, blockIdx.y, blockIdx.z, s, threadIdx.x, blockDim.x);
}

__global__ void inverse_inner_kernel(uint32_t* work, const uint32_t* tables, ntt::Plan p, ntt::Consts k) {
    extern __shared__ uint32_t s[];
    ntt::inverse_inner_block(work, tables, p, k, blockIdx.x, blockIdx.y, s, threadIdx.x, blockDim.x);
}

__global__ void inverse_outer_kernel(const uint32_t* work, uint32_t* out, size_t n, const uint32_t* tables,
                                     ntt::Plan p, ntt::Consts k) {
    extern __shared__ uint32_t s[];
    ntt::inverse_outer_block(work, out, n, tables, p, k, blockIdx.x, s, threadIdx.x, blockDim.x);
}

// Kept across calls: the twiddle tables of each size used so far, and the largest workspace needed so far.
uint32_t* g_tables[ntt::kMaxLog + 1] = {};
uint32_t* g_work = nullptr;
size_t g_work_points = 0;

}  // namespace

extern "C" void solution(const uint32_t* d_input1, const uint32_t* d_input2, uint32_t* d_output, size_t n) {
    if (n == 0) return;
    const ntt::Plan p = ntt::plan_for(n);
    if (p.log_n > ntt::kMaxLog) return;  // beyond the primes' roots of unity (n > 2^22): not this problem's sizes
    const ntt::Consts k = ntt::consts_for(p);
    if (g_tables[p.log_n] == nullptr) {
        std::vector<uint32_t> host = ntt::tables_for(p);
        cudaMalloc(&g_tables[p.log_n], host.size() * sizeof(uint32_t));
        cudaMemcpy(g_tables[p.log_n], host.data(), host.size() * sizeof(uint32_t), cudaMemcpyHostToDevice);
    }
    const size_t points = (size_t)2 * ntt::kPrimes << p.log_n;
    if (points > g_work_points) {
        cudaFree(g_work);
        cudaMalloc(&g_work, points * sizeof(uint32_t));
        g_work_points = points;
    }
    const uint32_t* tables = g_tables[p.log_n];
    forward_outer_kernel<<<dim3(p.col_blocks, 2, ntt::kPrimes), ntt::kThreads, ntt::outer_shared_bytes(p, 1)>>>(
        d_input1, d_input2, n, g_work, tables, p, k);
    forward_inner_kernel<<<dim3(p.tiles, 2, ntt::kPrimes), ntt::kThreads, ntt::inner_shared_bytes(p)>>>(
        g_work, tables, p, k);
    inverse_inner_kernel<<<dim3(p.tiles, ntt::kPrimes), ntt::kThreads, ntt::inner_shared_bytes(p)>>>(g_work, tables,
                                                                                                    p, k);
    inverse_outer_kernel<<<p.col_blocks, ntt::kThreads, ntt::outer_shared_bytes(p, ntt::kPrimes)>>>(
        g_work, d_output, n, tables, p, k);
}

#endif  // NTT_HOST_ONLY
