// See pc_sampling_session.h.
#include "pc_sampling_session.h"

#include <cstdlib>

namespace ws::rec::pcs {

void Session::Buf::init(std::size_t n, std::size_t nr)
{
    pcs.assign(n, CUpti_PCSamplingPCData{});
    reasons.assign(n * nr, CUpti_PCSamplingStallReason{});
    for (std::size_t i = 0; i < n; ++i) {
        pcs[i].size = sizeof(CUpti_PCSamplingPCData);
        pcs[i].stallReason = reasons.data() + i * nr;
    }
    data = {};
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = n;
    data.pPcData = pcs.data();
}

OpenError Session::open(const cupti::Api& api, CUcontext ctx, int period, std::string* error)
{
    m_api = &api;
    m_ctx = ctx;
    auto fail = [&](OpenError e, const std::string& text) {
        if (error) *error = text;
        return e;
    };
    CUpti_PCSamplingEnableParams en{};
    en.size = CUpti_PCSamplingEnableParamsSize;
    en.ctx = ctx;
    CUptiResult r = api.cuptiPCSamplingEnable(&en);
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        return fail(OpenError::NoPermission, "PC sampling not permitted: " + cupti::resultText(api, r)
                                                 + " (needs root or NVreg_RestrictProfilingToAdminUsers=0)");
    if (r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_COMPATIBLE || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED)
        return fail(OpenError::NotSupported, "PC sampling not supported here: " + cupti::resultText(api, r));
    if (r != CUPTI_SUCCESS) return fail(OpenError::Error, "cuptiPCSamplingEnable: " + cupti::resultText(api, r));
    m_open = true;

    size_t nReasons = 0;
    CUpti_PCSamplingGetNumStallReasonsParams nr{};
    nr.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
    nr.ctx = ctx;
    nr.numStallReasons = &nReasons;
    if ((r = api.cuptiPCSamplingGetNumStallReasons(&nr)) != CUPTI_SUCCESS)
        return fail(OpenError::Error, "stall reasons: " + cupti::resultText(api, r));
    m_index.assign(nReasons, 0);
    std::vector<std::vector<char>> names(nReasons, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
    std::vector<char*> namePtrs(nReasons);
    for (size_t i = 0; i < nReasons; ++i) namePtrs[i] = names[i].data();
    CUpti_PCSamplingGetStallReasonsParams gr{};
    gr.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    gr.ctx = ctx;
    gr.numStallReasons = nReasons;
    gr.stallReasonIndex = m_index.data();
    gr.stallReasons = namePtrs.data();
    if ((r = api.cuptiPCSamplingGetStallReasons(&gr)) != CUPTI_SUCCESS)
        return fail(OpenError::Error, "stall reason names: " + cupti::resultText(api, r));
    for (size_t i = 0; i < nReasons; ++i) m_reasonName[m_index[i]] = namePtrs[i];

    // Two separate buffers: the one in the configuration (CUPTI fills it at a range end)
    // and the one GetData fills. On the H200, one buffer used for both came back empty.
    const size_t collect = 20000;
    m_cfgBuf.init(collect, nReasons);
    m_getBuf.init(collect, nReasons);

    std::vector<CUpti_PCSamplingConfigurationInfo> cfg(7);
    for (auto& c : cfg) c = {};
    cfg[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    cfg[0].attributeData.stallReasonData.stallReasonCount = nReasons;
    cfg[0].attributeData.stallReasonData.pStallReasonIndex = m_index.data();
    cfg[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    cfg[1].attributeData.samplingPeriodData.samplingPeriod = uint32_t(period);  // 2^period cycles
    cfg[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    cfg[2].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    cfg[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    cfg[3].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    cfg[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    cfg[4].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    cfg[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    cfg[5].attributeData.samplingDataBufferData.samplingDataBuffer = &m_cfgBuf.data;
    cfg[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    cfg[6].attributeData.scratchBufferSizeData.scratchBufferSize = size_t(64) << 20;
    CUpti_PCSamplingConfigurationInfoParams cp{};
    cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    cp.ctx = ctx;
    cp.numAttributes = cfg.size();
    cp.pPCSamplingConfigurationInfo = cfg.data();
    if ((r = api.cuptiPCSamplingSetConfigurationAttribute(&cp)) != CUPTI_SUCCESS) {
        std::string which;
        for (const auto& c : cfg)
            if (c.attributeStatus != CUPTI_SUCCESS) which += " attr" + std::to_string(int(c.attributeType));
        return fail(OpenError::Error, "PC sampling configuration:" + which + " " + cupti::resultText(api, r));
    }
    return OpenError::None;
}

CUptiResult Session::start()
{
    CUpti_PCSamplingStartParams sp{};
    sp.size = CUpti_PCSamplingStartParamsSize;
    sp.ctx = m_ctx;
    return m_api->cuptiPCSamplingStart(&sp);
}

CUptiResult Session::stop()
{
    CUpti_PCSamplingStopParams stp{};
    stp.size = CUpti_PCSamplingStopParamsSize;
    stp.ctx = m_ctx;
    return m_api->cuptiPCSamplingStop(&stp);
}

Totals Session::drain(const Visit& visit)
{
    Totals t;
    auto consume = [&](const CUpti_PCSamplingData& d) {
        t.total += d.totalSamples;
        t.dropped += d.droppedSamples;
        t.nonUser += d.nonUsrKernelsTotalSamples;
        t.hardwareBufferFull = t.hardwareBufferFull || d.hardwareBufferFull;
        for (size_t i = 0; i < d.totalNumPcs && i < d.collectNumPcs; ++i) {
            const auto& pc = d.pPcData[i];
            for (size_t j = 0; j < pc.stallReasonCount; ++j) {
                if (pc.stallReason[j].samples == 0) continue;
                auto it = m_reasonName.find(pc.stallReason[j].pcSamplingStallReasonIndex);
                const std::string rn = it != m_reasonName.end() ? it->second : "reason_" + std::to_string(pc.stallReason[j].pcSamplingStallReasonIndex);
                visit(pc.functionName ? pc.functionName : "", pc.pcOffset, pc.cubinCrc, rn, pc.stallReason[j].samples);
            }
        }
    };
    for (;;) {
        CUpti_PCSamplingGetDataParams gd{};
        gd.size = CUpti_PCSamplingGetDataParamsSize;
        gd.ctx = m_ctx;
        gd.pcSamplingData = &m_getBuf.data;
        m_getBuf.data.totalNumPcs = 0;
        const CUptiResult r = m_api->cuptiPCSamplingGetData(&gd);
        if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) break;
        ++t.rounds;
        if (m_getBuf.data.totalNumPcs == 0 && m_getBuf.data.remainingNumPcs == 0) break;
        t.pcs += m_getBuf.data.totalNumPcs;
        consume(m_getBuf.data);
        if (m_getBuf.data.remainingNumPcs == 0 || t.rounds > 1000) break;
    }
    if (t.pcs == 0 && m_cfgBuf.data.totalNumPcs > 0) {
        consume(m_cfgBuf.data);
        t.pcs = m_cfgBuf.data.totalNumPcs;
        t.source = "config-buffer";
    }
    m_cfgBuf.data.totalNumPcs = 0;  // consumed (or superseded by GetData): never counted at the next drain
    return t;
}

void Session::close()
{
    if (!m_open) return;
    CUpti_PCSamplingDisableParams dp{};
    dp.size = CUpti_PCSamplingDisableParamsSize;
    dp.ctx = m_ctx;
    m_api->cuptiPCSamplingDisable(&dp);
    m_open = false;
}

std::pair<std::string, int> sourceOf(const cupti::Api& api, const std::string& cubin, const std::string& function, std::uint64_t pc,
                                     CUptiResult* result)
{
    std::pair<std::string, int> res{"", 0};
    if (result) *result = CUPTI_ERROR_INVALID_MODULE;
    if (cubin.size() < 4 || cubin.compare(0, 4, "\x7f" "ELF") != 0) return res;  // not a cubin: CUPTI is not asked
    CUpti_GetSassToSourceCorrelationParams sc{};
    sc.size = CUpti_GetSassToSourceCorrelationParamsSize;
    sc.cubin = cubin.data();
    sc.cubinSize = cubin.size();
    sc.functionName = function.c_str();
    sc.pcOffset = pc;
    const CUptiResult r = api.cuptiGetSassToSourceCorrelation(&sc);
    if (result) *result = r;
    if (r == CUPTI_SUCCESS) {
        std::string file = sc.fileName ? sc.fileName : "";
        if (sc.dirName && *sc.dirName && !file.empty() && file[0] != '/') file = std::string(sc.dirName) + "/" + file;
        res = {file, int(sc.lineNumber)};
        std::free(sc.fileName);
        std::free(sc.dirName);
    }
    return res;
}

std::uint64_t cubinCrc(const cupti::Api& api, const void* cubin, std::size_t size)
{
    CUpti_GetCubinCrcParams p{};
    p.size = CUpti_GetCubinCrcParamsSize;
    p.cubin = cubin;
    p.cubinSize = size;
    return api.cuptiGetCubinCrc(&p) == CUPTI_SUCCESS ? p.cubinCrc : 0;
}

}  // namespace ws::rec::pcs
