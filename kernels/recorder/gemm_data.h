// Device matrices for recording a rung: random bf16 A (MxK) and B (NxK), C (MxN),
// and a spot check of C against fp64 dot products on the host.
#pragma once

#include "warpstage/ladder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ws::rec {

class GemmData {
public:
    GemmData() = default;
    GemmData(const GemmData&) = delete;
    GemmData& operator=(const GemmData&) = delete;
    ~GemmData();

    // Allocates and fills A and B with uniform random values in [-1, 1) (seeded), C unset.
    // Returns "" or a CUDA error message.
    std::string allocate(const ladder::Shape& s, std::uint64_t seed);
    // Fills C with 0xFFFF (bf16 NaN) so unwritten outputs show.
    std::string poisonC();
    // Copies `samples` elements of C back and compares them with fp64 dot products.
    // Returns "" if every one is finite and within tolerance; else what is wrong.
    // maxRelError receives the largest |c - ref| / max(|ref|, 1).
    std::string spotCheck(int samples, double& maxRelError) const;

    const void* a() const { return m_a; }
    const void* b() const { return m_b; }
    void* c() const { return m_c; }
    const ladder::Shape& shape() const { return m_shape; }

private:
    ladder::Shape m_shape;
    void* m_a = nullptr;
    void* m_b = nullptr;
    void* m_c = nullptr;
    std::vector<std::uint16_t> m_hostA, m_hostB;
};

float bf16ToFloat(std::uint16_t v);
std::uint16_t floatToBf16(float f);

}  // namespace ws::rec
