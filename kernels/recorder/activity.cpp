#include "activity.h"

#include <cstdlib>

namespace ws::rec {

namespace {
constexpr std::size_t kBufferBytes = 8u << 20;

void CUPTIAPI onBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxNumRecords)
{
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxNumRecords = 0;
}

void CUPTIAPI onBufferCompleted(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t validSize)
{
    ActivityCollector::instance().consume(buffer, validSize);
    std::free(buffer);
}

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
}  // namespace

ActivityCollector& ActivityCollector::instance()
{
    static ActivityCollector c;
    return c;
}

std::string ActivityCollector::start(const cupti::Api& api)
{
    m_api = &api;
    const CUptiResult r = api.cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted);
    if (r != CUPTI_SUCCESS) return "cuptiActivityRegisterCallbacks: " + cupti::resultText(api, r);
    return enable();
}

std::string ActivityCollector::enable()
{
    for (auto k : kKinds) {
        const CUptiResult r = m_api->cuptiActivityEnable(k);
        if (r != CUPTI_SUCCESS) return "cuptiActivityEnable(" + std::to_string(int(k)) + "): " + cupti::resultText(*m_api, r);
    }
    return {};
}

void ActivityCollector::disable()
{
    if (!m_api) return;
    m_api->cuptiActivityFlushAll(1);
    for (auto k : kKinds) m_api->cuptiActivityDisable(k);
}

void ActivityCollector::flush()
{
    if (m_api) m_api->cuptiActivityFlushAll(1);
}

void ActivityCollector::push(std::uint64_t id)
{
    m_api->cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void ActivityCollector::pop()
{
    std::uint64_t id = 0;
    m_api->cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

void ActivityCollector::take(std::vector<KernelActivity>& kernels, std::vector<MemActivity>& mem,
                             std::map<std::uint64_t, std::vector<std::uint32_t>>& ext, std::uint64_t& dropped)
{
    std::lock_guard<std::mutex> lk(m_mutex);
    kernels.swap(m_kernels);
    mem.swap(m_mem);
    ext.swap(m_ext);
    dropped = m_dropped;
    m_kernels.clear();
    m_mem.clear();
    m_ext.clear();
    m_dropped = 0;
}

void ActivityCollector::consume(std::uint8_t* buffer, std::size_t validSize)
{
    if (!m_api || !buffer) return;
    std::lock_guard<std::mutex> lk(m_mutex);
    CUpti_Activity* rec = nullptr;
    while (m_api->cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
            KernelActivity a;
            a.name = k->name ? k->name : "";
            a.start = k->start;
            a.end = k->end;
            a.correlationId = k->correlationId;
            a.streamId = k->streamId;
            a.grid[0] = k->gridX; a.grid[1] = k->gridY; a.grid[2] = k->gridZ;
            a.block[0] = k->blockX; a.block[1] = k->blockY; a.block[2] = k->blockZ;
            a.cluster[0] = int(k->clusterX ? k->clusterX : 1);
            a.cluster[1] = int(k->clusterY ? k->clusterY : 1);
            a.cluster[2] = int(k->clusterZ ? k->clusterZ : 1);
            a.staticSmem = k->staticSharedMemory;
            a.dynamicSmem = k->dynamicSharedMemory;
            a.registers = k->registersPerThread;
            m_kernels.push_back(std::move(a));
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
            m_mem.push_back({int(m->copyKind), m->bytes, m->start, m->end, m->correlationId, m->streamId});
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
            m_mem.push_back({-1, m->bytes, m->start, m->end, m->correlationId, m->streamId});
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
            if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) m_ext[e->externalId].push_back(e->correlationId);
            break;
        }
        default:
            break;  // runtime/driver API records: only needed for the correlation ids CUPTI assigns
        }
    }
    std::size_t dropped = 0;
    if (m_api->cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) m_dropped += dropped;
}

}  // namespace ws::rec
