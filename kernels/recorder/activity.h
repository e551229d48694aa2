// CUPTI Activity API collection for pass 1 (kernels, memcpy, memset, runtime/driver
// API for correlation, external correlation ids that tie launches to rungs).
#pragma once

#include "cupti_api.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ws::rec {

struct KernelActivity {
    std::string name;        // mangled, as CUPTI reports it
    std::uint64_t start = 0, end = 0;
    std::uint32_t correlationId = 0, streamId = 0;
    int grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
    int staticSmem = 0, dynamicSmem = 0, registers = 0;
};

struct MemActivity {
    int copyKind = -1;       // CUpti_ActivityMemcpyKind, -1 for memset
    std::uint64_t bytes = 0, start = 0, end = 0;
    std::uint32_t correlationId = 0, streamId = 0;
};

class ActivityCollector {
public:
    // Registers the buffer callbacks and enables the kinds. Returns "" or an error.
    std::string start(const cupti::Api& api);
    std::string enable();
    void disable();
    void flush();
    // Takes everything collected so far.
    void take(std::vector<KernelActivity>& kernels, std::vector<MemActivity>& mem,
              std::map<std::uint64_t, std::vector<std::uint32_t>>& externalToCorrelation, std::uint64_t& dropped);

    void push(std::uint64_t externalId);
    void pop();

    static ActivityCollector& instance();

    // Used by the CUPTI buffer callback.
    void consume(std::uint8_t* buffer, std::size_t validSize);

private:
    const cupti::Api* m_api = nullptr;
    std::mutex m_mutex;
    std::vector<KernelActivity> m_kernels;
    std::vector<MemActivity> m_mem;
    std::map<std::uint64_t, std::vector<std::uint32_t>> m_ext;
    std::uint64_t m_dropped = 0;
};

}  // namespace ws::rec
