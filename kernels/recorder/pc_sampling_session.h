// CUPTI PC sampling on one context, in KERNEL_SERIALIZED mode with start/stop control: shared by the
// ladder's stall pass (stall_pass.cpp, a child process of warpstage-record, CUPTI through dlopen) and the
// program stall pass (inject/pc_sampling.cpp, inside the user's program, CUPTI linked). Both hand in a
// cupti::Api; the injection library fills one with the functions it links (cupti::linkedApi()).
// No Activity API here: PC sampling after the Activity API in one process crashed once on the H200.
#pragma once

#include "cupti_api.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ws::rec::pcs {

// Why open() failed, as the ladder's stall pass reports it (kStall* exit codes of recorder.h).
enum class OpenError { None, NoPermission, NotSupported, Error };

struct Totals {
    std::uint64_t total = 0, dropped = 0, nonUser = 0;
    bool hardwareBufferFull = false;
    std::size_t pcs = 0;
    int rounds = 0;
    const char* source = "getdata";  // or "config-buffer": where the samples came from
};

class Session {
public:
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // cuptiPCSamplingEnable + all stall reasons + the configuration (period: 2^period cycles).
    OpenError open(const cupti::Api& api, CUcontext ctx, int period, std::string* error);
    CUptiResult start();
    CUptiResult stop();
    // Everything collected since the last drain: visit(function, pcOffset, cubinCrc, reasonName, samples) for
    // every nonzero (pc, reason). GetData until empty; the configuration buffer only when GetData gave nothing
    // (never both: that would count samples twice).
    using Visit = std::function<void(const char* function, std::uint64_t pcOffset, std::uint64_t crc, const std::string& reason,
                                     std::uint64_t samples)>;
    Totals drain(const Visit& visit);
    void close();
    bool isOpen() const { return m_open; }
    CUcontext context() const { return m_ctx; }

private:
    struct Buf {
        std::vector<CUpti_PCSamplingPCData> pcs;
        std::vector<CUpti_PCSamplingStallReason> reasons;
        CUpti_PCSamplingData data{};
        void init(std::size_t n, std::size_t nr);
    };
    const cupti::Api* m_api = nullptr;
    CUcontext m_ctx = nullptr;
    bool m_open = false;
    std::vector<std::uint32_t> m_index;
    std::map<std::uint32_t, std::string> m_reasonName;
    Buf m_cfgBuf, m_getBuf;
};

// SASS -> source line of one pc with cuptiGetSassToSourceCorrelation on a cubin: {file (dir/ joined), line},
// {"", 0} if the cubin has no line info for it; `result` (if given): CUPTI's answer (CUPTI_ERROR_INVALID_MODULE
// for bytes that are not a cubin).
std::pair<std::string, int> sourceOf(const cupti::Api& api, const std::string& cubin, const std::string& function, std::uint64_t pc,
                                     CUptiResult* result = nullptr);

// cuptiGetCubinCrc of a cubin (0 if CUPTI cannot).
std::uint64_t cubinCrc(const cupti::Api& api, const void* cubin, std::size_t size);

}  // namespace ws::rec::pcs
