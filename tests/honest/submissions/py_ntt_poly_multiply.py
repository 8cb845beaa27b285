# poly-multiply-ff by number-theoretic transforms: O(n log n) work where the problem's formula counts 2·n².
# 2^31 − 1 has no large power-of-two root of unity, so the product is taken modulo three NTT-friendly primes and
# recombined by the Chinese remainder theorem. Each true coefficient is below n·(2^31 − 1)² < 2^62 · 2^22, under
# the primes' product (about 2^86) for n ≤ 2^22, so the recombined integer is exact before its reduction mod p.
# Both inputs and all three primes go through each stage at once, as rows of one int64 tensor; residues stay
# below 2^30, so every product fits in int64.
import torch

P = 2147483647
PRIMES = (998244353, 167772161, 469762049)  # c·2^k + 1 with k = 23, 25, 26; 3 generates each group
GENERATOR = 3

_tables: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor]] = {}


def _powers(base: list[int], count: int, device: torch.device) -> torch.Tensor:
    """Rows of base[r]^e mod PRIMES[r] for e < count, by doubling: each block is the last times base^(2^b)."""
    q = torch.tensor(PRIMES, dtype=torch.int64, device=device)[:, None]
    out = torch.ones((len(PRIMES), count), dtype=torch.int64, device=device)
    step = torch.tensor(base, dtype=torch.int64, device=device)[:, None]
    filled = 1
    while filled < count:
        take = min(filled, count - filled)
        out[:, filled : filled + take] = out[:, :take] * step % q
        step = step * step % q
        filled += take
    return out


def _roots(size: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward and inverse twiddles w^e, e < size/2, for a transform of `size` points under each prime."""
    key = (size, str(device))
    if key not in _tables:
        w = [pow(GENERATOR, (q - 1) // size, q) for q in PRIMES]
        w_inv = [pow(x, q - 2, q) for x, q in zip(w, PRIMES, strict=True)]
        half = max(size // 2, 1)
        _tables[key] = (_powers(w, half, device), _powers(w_inv, half, device))
    return _tables[key]


def _forward(x: torch.Tensor, q: torch.Tensor, roots: torch.Tensor) -> torch.Tensor:
    """Decimation in frequency: natural order in, bit-reversed order out. x is (rows, size), roots (rows, size/2)."""
    rows, size = x.shape
    h = size // 2
    while h >= 1:
        x = x.view(rows, size // (2 * h), 2, h)
        u, v = x[:, :, 0, :], x[:, :, 1, :]
        w = roots[:, :: size // (2 * h)][:, None, :h]
        x = torch.stack(((u + v) % q[:, :, None], (u - v) % q[:, :, None] * w % q[:, :, None]), dim=2)
        x = x.reshape(rows, size)
        h //= 2
    return x


def _inverse(x: torch.Tensor, q: torch.Tensor, roots: torch.Tensor) -> torch.Tensor:
    """Decimation in time with inverse roots: bit-reversed order in, natural order out, not yet divided by size."""
    rows, size = x.shape
    h = 1
    while h < size:
        x = x.view(rows, size // (2 * h), 2, h)
        w = roots[:, :: size // (2 * h)][:, None, :h]
        u, v = x[:, :, 0, :], x[:, :, 1, :] * w % q[:, :, None]
        x = torch.stack(((u + v) % q[:, :, None], (u - v) % q[:, :, None]), dim=2).reshape(rows, size)
        h *= 2
    return x


def _crt_mod_p(r: torch.Tensor) -> torch.Tensor:
    """Garner's recombination of residues r[i] mod PRIMES[i], reduced mod P; every step stays below 2^62."""
    q0, q1, q2 = PRIMES
    v0 = r[0]
    v1 = (r[1] - v0) % q1 * pow(q0, -1, q1) % q1
    v2 = ((r[2] - v0) % q2 * pow(q0, -1, q2) % q2 - v1) % q2 * pow(q1, -1, q2) % q2
    return (v0 % P + v1 * (q0 % P) % P + v2 * (q0 * q1 % P) % P) % P


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    length = 2 * n - 1
    size = 1 << (length - 1).bit_length()
    device = d_input1.device
    q = torch.tensor(PRIMES, dtype=torch.int64, device=device)[:, None]
    forward_roots, inverse_roots = _roots(size, device)
    x = torch.zeros((2, len(PRIMES), size), dtype=torch.int64, device=device)
    x[0, :, :n] = d_input1.to(torch.int64)
    x[1, :, :n] = d_input2.to(torch.int64)
    x = x % q  # rows: (a, b) × primes
    spectra = _forward(x.view(2 * len(PRIMES), size), q.repeat(2, 1), forward_roots.repeat(2, 1))
    spectra = spectra.view(2, len(PRIMES), size)
    product = _inverse(spectra[0] * spectra[1] % q, q, inverse_roots)
    size_inverse = torch.tensor([pow(size, -1, p) for p in PRIMES], dtype=torch.int64, device=device)[:, None]
    residues = product[:, :length] * size_inverse % q
    d_output.copy_(_crt_mod_p(residues).to(torch.uint32))
