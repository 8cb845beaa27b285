// Runs cu_ntt_poly_multiply.cu's per-block functions on the host, one block after another with one thread each
// and the launches' own grids, for tests/honest/test_ntt_host.py. Reads n and the 2n coefficients from stdin,
// writes the 2n − 1 product coefficients to stdout. Built with nvcc -DNTT_HOST_ONLY: no GPU is needed.
#include <cstdio>
#include <vector>

#include "submissions/cu_ntt_poly_multiply.cu"

int main() {
    size_t n = 0;
    if (std::scanf("%zu", &n) != 1 || n == 0) return 2;
    std::vector<uint32_t> a(n), b(n), out(2 * n - 1, 0xFFFFFFFFu);
    for (auto* v : {&a, &b})
        for (auto& x : *v)
            if (std::scanf("%u", &x) != 1) return 2;
    const ntt::Plan p = ntt::plan_for(n);
    if (p.log_n > ntt::kMaxLog) return 3;
    const ntt::Consts k = ntt::consts_for(p);
    const std::vector<uint32_t> tables = ntt::tables_for(p);
    std::vector<uint32_t> work((size_t)2 * ntt::kPrimes << p.log_n, 0xDEADBEEFu);
    std::vector<uint32_t> s(ntt::outer_shared_bytes(p, ntt::kPrimes) / 4 + ntt::inner_shared_bytes(p) / 4);
    for (uint32_t g = 0; g < p.col_blocks; ++g)
        for (int which = 0; which < 2; ++which)
            for (int prime = 0; prime < ntt::kPrimes; ++prime)
                ntt::forward_outer_block(which == 0 ? a.data() : b.data(), n, work.data(), tables.data(), p, k, g,
                                         which, prime, s.data(), 0, 1);
    for (uint32_t t = 0; t < p.tiles; ++t)
        for (int which = 0; which < 2; ++which)
            for (int prime = 0; prime < ntt::kPrimes; ++prime)
                ntt::forward_inner_block(work.data(), tables.data(), p, k, t, which, prime, s.data(), 0, 1);
    for (uint32_t t = 0; t < p.tiles; ++t)
        for (int prime = 0; prime < ntt::kPrimes; ++prime)
            ntt::inverse_inner_block(work.data(), tables.data(), p, k, t, prime, s.data(), 0, 1);
    for (uint32_t g = 0; g < p.col_blocks; ++g)
        ntt::inverse_outer_block(work.data(), out.data(), n, tables.data(), p, k, g, s.data(), 0, 1);
    for (size_t i = 0; i < out.size(); ++i) std::printf("%u\n", out[i]);
    return 0;
}
