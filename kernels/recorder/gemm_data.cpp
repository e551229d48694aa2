#include "gemm_data.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

namespace ws::rec {

float bf16ToFloat(std::uint16_t v)
{
    const std::uint32_t bits = std::uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint16_t floatToBf16(float f)
{
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even
    return std::uint16_t(bits >> 16);
}

namespace {
std::string cudaText(cudaError_t e, const char* what)
{
    return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

void fillRandom(std::vector<std::uint16_t>& v, std::uint64_t seed)
{
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (auto& e : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const float u = float((x >> 40) & 0xFFFFFF) / float(1 << 24);  // [0, 1)
        e = floatToBf16(2.0f * u - 1.0f);
    }
}
}  // namespace

GemmData::~GemmData()
{
    if (m_a) cudaFree(m_a);
    if (m_b) cudaFree(m_b);
    if (m_c) cudaFree(m_c);
}

std::string GemmData::allocate(const ladder::Shape& s, std::uint64_t seed)
{
    m_shape = s;
    const std::size_t na = std::size_t(s.m) * s.k, nb = std::size_t(s.n) * s.k, nc = std::size_t(s.m) * s.n;
    m_hostA.resize(na);
    m_hostB.resize(nb);
    fillRandom(m_hostA, seed);
    fillRandom(m_hostB, seed + 1);
    cudaError_t e;
    if ((e = cudaMalloc(&m_a, na * 2)) != cudaSuccess) return cudaText(e, "cudaMalloc(A)");
    if ((e = cudaMalloc(&m_b, nb * 2)) != cudaSuccess) return cudaText(e, "cudaMalloc(B)");
    if ((e = cudaMalloc(&m_c, nc * 2)) != cudaSuccess) return cudaText(e, "cudaMalloc(C)");
    if ((e = cudaMemcpy(m_a, m_hostA.data(), na * 2, cudaMemcpyHostToDevice)) != cudaSuccess) return cudaText(e, "upload A");
    if ((e = cudaMemcpy(m_b, m_hostB.data(), nb * 2, cudaMemcpyHostToDevice)) != cudaSuccess) return cudaText(e, "upload B");
    return {};
}

std::string GemmData::poisonC()
{
    const cudaError_t e = cudaMemset(m_c, 0xFF, std::size_t(m_shape.m) * m_shape.n * 2);
    return e == cudaSuccess ? std::string() : cudaText(e, "poison C");
}

std::string GemmData::spotCheck(int samples, double& maxRelError) const
{
    maxRelError = 0;
    const auto& s = m_shape;
    std::uint64_t x = 0x1234567ull + std::uint64_t(s.m) * 31 + s.n;
    std::string problems;
    int bad = 0;
    for (int i = 0; i < samples; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Always include the corners: tile-edge bugs show there first.
        int r, c;
        if (i == 0) { r = 0; c = 0; }
        else if (i == 1) { r = s.m - 1; c = s.n - 1; }
        else { r = int(x % std::uint64_t(s.m)); c = int((x >> 32) % std::uint64_t(s.n)); }
        std::uint16_t got = 0;
        const cudaError_t e = cudaMemcpy(&got, static_cast<const char*>(m_c) + (std::size_t(r) * s.n + c) * 2, 2,
                                         cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) return cudaText(e, "read C");
        double ref = 0;
        for (int k = 0; k < s.k; ++k)
            ref += double(bf16ToFloat(m_hostA[std::size_t(r) * s.k + k])) * double(bf16ToFloat(m_hostB[std::size_t(c) * s.k + k]));
        const double g = bf16ToFloat(got);
        const double rel = std::isfinite(g) ? std::abs(g - ref) / std::max(std::abs(ref), 1.0) : INFINITY;
        maxRelError = std::max(maxRelError, rel);
        // bf16 output: 2^-8 relative rounding, plus fp32 accumulation order; 2e-2 is generous but catches wrong tiles.
        if (!(rel <= 2e-2)) {
            if (++bad <= 3) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "%sC[%d,%d] = %g, expected %g", problems.empty() ? "" : "; ", r, c, g, ref);
                problems += buf;
            }
        }
    }
    if (bad) return std::to_string(bad) + " of " + std::to_string(samples) + " spot-checked elements wrong: " + problems;
    return {};
}

}  // namespace ws::rec
