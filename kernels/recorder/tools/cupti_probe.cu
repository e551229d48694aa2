// cupti_probe: a small self-contained check of what the recorder relies on, run once on the
// device machine before the recorder itself. Own trivial kernel, no ladder.
//   cupti_probe info        device, driver/runtime/CUPTI versions
//   cupti_probe activity    Activity API (kernel, memcpy, memset, runtime, driver) + globaltimer/clock64 pairs
//   cupti_probe pcs         PC sampling alone (KERNEL_SERIALIZED, start/stop), SASS->source correlation
//   cupti_probe both        Activity API first (flushed, disabled), then PC sampling in the same process
// Each mode is meant to run as its own process, so a crash in one does not hide the others.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(2); } } while (0)
#define CU(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char* s_ = nullptr; cuptiGetResultString(r_, &s_); std::printf("CUPTI error %d (%s) at %s:%d: %s\n", int(r_), s_ ? s_ : "?", __FILE__, __LINE__, #x); std::exit(3); } } while (0)

struct BlockStamp {
    unsigned long long gtStart, clkStart, gtEnd, clkEnd;
    unsigned smid, pad;
};

__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned smid()
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

// Some memory traffic and some math, so the stall reasons vary.
__global__ void probeKernel(const float* __restrict__ in, float* __restrict__ out, int n, int iters, BlockStamp* stamps)
{
    __shared__ float sh[256];
    if (threadIdx.x == 0) {
        stamps[blockIdx.x].gtStart = globaltimer();
        stamps[blockIdx.x].clkStart = clock64();
        stamps[blockIdx.x].smid = smid();
    }
    float acc = 0.f;
    for (int it = 0; it < iters; ++it) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
            float v = in[(i * 17 + it * 1031) % n];
            #pragma unroll 4
            for (int j = 0; j < 16; ++j) v = v * 1.0001f + 0.5f;
            acc += v;
        }
        sh[threadIdx.x] = acc;
        __syncthreads();
        acc += sh[(threadIdx.x + 1) % blockDim.x];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        stamps[blockIdx.x].gtEnd = globaltimer();
        stamps[blockIdx.x].clkEnd = clock64();
    }
}

// globaltimer granularity: one thread reads it in a loop and keeps the distinct deltas.
__global__ void tickKernel(unsigned long long* deltas, int n)
{
    unsigned long long last = globaltimer();
    int k = 0;
    for (int i = 0; i < 1000000 && k < n; ++i) {
        unsigned long long t = globaltimer();
        if (t != last) { deltas[k++] = t - last; last = t; }
    }
}

static void info()
{
    int dev = 0;
    cudaDeviceProp p{};
    CK(cudaGetDeviceProperties(&p, dev));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    uint32_t cupti = 0;
    CU(cuptiGetVersion(&cupti));
    int clk = 0, memclk = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&memclk, cudaDevAttrMemoryClockRate, dev);
    std::printf("INFO device=\"%s\" cc=%d.%d sms=%d clockKHz=%d memClockKHz=%d l2=%d gmem=%zu driver=%d runtime=%d cuptiApi=%u\n",
                p.name, p.major, p.minor, p.multiProcessorCount, clk, memclk, p.l2CacheSize, p.totalGlobalMem, drv, rt, cupti);
}

// ---------------------------------------------------------------- activity
static std::vector<std::string> g_lines;
static int g_nKernel = 0, g_nMemcpy = 0, g_nMemset = 0, g_nRuntime = 0, g_nDriver = 0;
static uint64_t g_kStart = 0, g_kEnd = 0;

static void CUPTIAPI bufRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    *size = 8 << 20;
    *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
    *maxNumRecords = 0;
}
static void CUPTIAPI bufCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize)
{
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &rec) == CUPTI_SUCCESS) {
        char line[512];
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
            auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
            ++g_nKernel;
            std::snprintf(line, sizeof line, "KERNEL name=%s start=%" PRIu64 " end=%" PRIu64 " dur=%" PRIu64 " corr=%u stream=%u grid=%d block=%d regs=%u cluster=%u",
                          k->name, k->start, k->end, k->end - k->start, k->correlationId, k->streamId, k->gridX, k->blockX,
                          unsigned(k->registersPerThread), k->clusterX);
            if (std::strstr(k->name, "probeKernel")) { g_kStart = k->start; g_kEnd = k->end; }
            g_lines.push_back(line);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
            ++g_nMemcpy;
            std::snprintf(line, sizeof line, "MEMCPY kind=%u bytes=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64 " corr=%u", unsigned(m->copyKind), m->bytes, m->start, m->end, m->correlationId);
            g_lines.push_back(line);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
            ++g_nMemset;
            std::snprintf(line, sizeof line, "MEMSET bytes=%" PRIu64 " start=%" PRIu64 " end=%" PRIu64 " corr=%u", m->bytes, m->start, m->end, m->correlationId);
            g_lines.push_back(line);
            break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME: ++g_nRuntime; break;
        case CUPTI_ACTIVITY_KIND_DRIVER: ++g_nDriver; break;
        default: break;
        }
    }
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    if (dropped) std::printf("ACTIVITY dropped=%zu\n", dropped);
    free(buffer);
}

struct Work {
    float* in = nullptr;
    float* out = nullptr;
    BlockStamp* stamps = nullptr;
    int n = 1 << 22, blocks = 264, threads = 256;
};
static Work makeWork()
{
    Work w;
    CK(cudaMalloc(&w.in, sizeof(float) * w.n));
    CK(cudaMalloc(&w.out, sizeof(float) * w.blocks * w.threads));
    CK(cudaMalloc(&w.stamps, sizeof(BlockStamp) * w.blocks));
    std::vector<float> h(w.n);
    for (int i = 0; i < w.n; ++i) h[i] = float(i % 977) * 0.001f;
    CK(cudaMemcpy(w.in, h.data(), sizeof(float) * w.n, cudaMemcpyHostToDevice));
    CK(cudaMemset(w.stamps, 0, sizeof(BlockStamp) * w.blocks));
    return w;
}

static void activity(bool finalizeAfter)
{
    CU(cuptiActivityRegisterCallbacks(bufRequested, bufCompleted));
    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    CU(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    CK(cudaFree(nullptr));
    Work w = makeWork();
    probeKernel<<<w.blocks, w.threads>>>(w.in, w.out, w.n, 4, w.stamps);  // warm-up
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint64_t t0 = 0;
    cuptiGetTimestamp(&t0);
    probeKernel<<<w.blocks, w.threads>>>(w.in, w.out, w.n, 40, w.stamps);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    uint64_t t1 = 0;
    cuptiGetTimestamp(&t1);
    std::vector<BlockStamp> st(w.blocks);
    CK(cudaMemcpy(st.data(), w.stamps, sizeof(BlockStamp) * w.blocks, cudaMemcpyDeviceToHost));

    unsigned long long* d = nullptr;
    CK(cudaMalloc(&d, 64 * sizeof(unsigned long long)));
    CK(cudaMemset(d, 0, 64 * sizeof(unsigned long long)));
    tickKernel<<<1, 1>>>(d, 64);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> deltas(64);
    CK(cudaMemcpy(deltas.data(), d, sizeof(unsigned long long) * 64, cudaMemcpyDeviceToHost));

    CU(cuptiActivityFlushAll(1));
    for (auto& l : g_lines) std::printf("%s\n", l.c_str());
    std::printf("ACTIVITY counts kernel=%d memcpy=%d memset=%d runtime=%d driver=%d\n", g_nKernel, g_nMemcpy, g_nMemset, g_nRuntime, g_nDriver);
    std::printf("CUPTI host timestamps around launch: %" PRIu64 " .. %" PRIu64 "\n", t0, t1);

    std::map<unsigned long long, int> hist;
    for (auto v : deltas) if (v) hist[v]++;
    std::printf("GLOBALTIMER tick deltas:");
    for (auto& [v, c] : hist) std::printf(" %llu ns x%d", v, c);
    std::printf("\n");

    uint64_t minS = UINT64_MAX, maxE = 0;
    double sumNpc = 0, minNpc = 1e9, maxNpc = 0;
    int nOk = 0;
    std::map<unsigned, int> sms;
    for (auto& s : st) {
        if (!s.gtStart || !s.gtEnd) continue;
        ++nOk;
        minS = std::min<uint64_t>(minS, s.gtStart);
        maxE = std::max<uint64_t>(maxE, s.gtEnd);
        double npc = double(s.gtEnd - s.gtStart) / double(s.clkEnd - s.clkStart);
        sumNpc += npc; minNpc = std::min(minNpc, npc); maxNpc = std::max(maxNpc, npc);
        sms[s.smid]++;
    }
    std::printf("STAMPS blocks=%d/%d distinctSMs=%zu gtSpan=%" PRIu64 " ns ns/cycle mean=%.6f min=%.6f max=%.6f (=> %.1f MHz)\n",
                nOk, w.blocks, sms.size(), maxE - minS, sumNpc / nOk, minNpc, maxNpc, 1000.0 / (sumNpc / nOk));
    std::printf("STAMPS block0: gt %llu..%llu clk %llu..%llu sm %u\n", st[0].gtStart, st[0].gtEnd, st[0].clkStart, st[0].clkEnd, st[0].smid);
    if (g_kStart) {
        std::printf("ALIGN cupti kernel [%" PRIu64 ", %" PRIu64 "] dur %" PRIu64 "; globaltimer CTAs [%" PRIu64 ", %" PRIu64 "] span %" PRIu64 "\n",
                    g_kStart, g_kEnd, g_kEnd - g_kStart, minS, maxE, maxE - minS);
        std::printf("ALIGN cuptiStart - minCtaStart = %" PRId64 " ns; cuptiEnd - maxCtaEnd = %" PRId64 " ns; slack (cuptiDur - ctaSpan) = %" PRId64 " ns\n",
                    int64_t(g_kStart) - int64_t(minS), int64_t(g_kEnd) - int64_t(maxE), int64_t(g_kEnd - g_kStart) - int64_t(maxE - minS));
    }
    if (finalizeAfter) {
        CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
        CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
        CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET));
        CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
        CU(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
        CU(cuptiActivityFlushAll(1));
    }
    cudaFree(w.in); cudaFree(w.out); cudaFree(w.stamps); cudaFree(d);
}

// ---------------------------------------------------------------- PC sampling
struct Module { std::vector<char> cubin; uint64_t crc = 0; };
static std::vector<Module> g_modules;

static void CUPTIAPI resourceCb(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata)
{
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_MODULE_LOADED) return;
    auto* rd = static_cast<const CUpti_ResourceData*>(cbdata);
    auto* md = static_cast<const CUpti_ModuleResourceData*>(rd->resourceDescriptor);
    if (!md || !md->pCubin || !md->cubinSize) return;
    Module m;
    m.cubin.assign(md->pCubin, md->pCubin + md->cubinSize);
    CUpti_GetCubinCrcParams p{};
    p.size = CUpti_GetCubinCrcParamsSize;
    p.cubin = m.cubin.data();
    p.cubinSize = m.cubin.size();
    if (cuptiGetCubinCrc(&p) == CUPTI_SUCCESS) m.crc = p.cubinCrc;
    std::printf("MODULE loaded id=%u size=%zu crc=%" PRIu64 "\n", md->moduleId, md->cubinSize, m.crc);
    g_modules.push_back(std::move(m));
}

static void pcs(int periodExp, bool serialized)
{
    CUpti_SubscriberHandle sub{};
    CU(cuptiSubscribe(&sub, resourceCb, nullptr));
    CU(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED));
    CK(cudaFree(nullptr));
    CUcontext ctx = nullptr;
    cuCtxGetCurrent(&ctx);
    Work w = makeWork();

    CUpti_PCSamplingEnableParams en{};
    en.size = CUpti_PCSamplingEnableParamsSize;
    en.ctx = ctx;
    CUptiResult r = cuptiPCSamplingEnable(&en);
    if (r != CUPTI_SUCCESS) {
        const char* s = nullptr; cuptiGetResultString(r, &s);
        std::printf("PCS enable failed: %d %s\n", int(r), s ? s : "?");
        std::exit(4);
    }
    size_t nReasons = 0;
    CUpti_PCSamplingGetNumStallReasonsParams nr{};
    nr.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
    nr.ctx = ctx;
    nr.numStallReasons = &nReasons;
    CU(cuptiPCSamplingGetNumStallReasons(&nr));
    std::vector<uint32_t> idx(nReasons);
    std::vector<std::vector<char>> names(nReasons, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE));
    std::vector<char*> namePtrs(nReasons);
    for (size_t i = 0; i < nReasons; ++i) namePtrs[i] = names[i].data();
    CUpti_PCSamplingGetStallReasonsParams gr{};
    gr.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    gr.ctx = ctx;
    gr.numStallReasons = nReasons;
    gr.stallReasonIndex = idx.data();
    gr.stallReasons = namePtrs.data();
    CU(cuptiPCSamplingGetStallReasons(&gr));
    std::map<uint32_t, std::string> reasonName;
    std::printf("PCS %zu stall reasons:", nReasons);
    for (size_t i = 0; i < nReasons; ++i) { reasonName[idx[i]] = namePtrs[i]; std::printf(" %u=%s", idx[i], namePtrs[i]); }
    std::printf("\n");

    const size_t collectPcs = 4096;
    std::vector<CUpti_PCSamplingPCData> pcData(collectPcs);
    std::vector<std::vector<CUpti_PCSamplingStallReason>> reasonBufs(collectPcs, std::vector<CUpti_PCSamplingStallReason>(nReasons));
    for (size_t i = 0; i < collectPcs; ++i) {
        pcData[i] = {};
        pcData[i].size = sizeof(CUpti_PCSamplingPCData);
        pcData[i].stallReason = reasonBufs[i].data();
    }
    CUpti_PCSamplingData data{};  // GetData buffer
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = collectPcs;
    data.pPcData = pcData.data();
    // Separate buffer handed to CUPTI in the configuration (filled on disable / module unload).
    std::vector<CUpti_PCSamplingPCData> cfgPcData(collectPcs);
    std::vector<std::vector<CUpti_PCSamplingStallReason>> cfgReasonBufs(collectPcs, std::vector<CUpti_PCSamplingStallReason>(nReasons));
    for (size_t i = 0; i < collectPcs; ++i) {
        cfgPcData[i] = {};
        cfgPcData[i].size = sizeof(CUpti_PCSamplingPCData);
        cfgPcData[i].stallReason = cfgReasonBufs[i].data();
    }
    CUpti_PCSamplingData cfgData{};
    cfgData.size = sizeof(CUpti_PCSamplingData);
    cfgData.collectNumPcs = collectPcs;
    cfgData.pPcData = cfgPcData.data();

    std::vector<CUpti_PCSamplingConfigurationInfo> cfg(7);
    for (auto& c : cfg) c = {};
    cfg[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    cfg[0].attributeData.stallReasonData.stallReasonCount = nReasons;
    cfg[0].attributeData.stallReasonData.pStallReasonIndex = idx.data();
    cfg[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    cfg[1].attributeData.samplingPeriodData.samplingPeriod = uint32_t(periodExp);
    cfg[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    cfg[2].attributeData.collectionModeData.collectionMode = serialized ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    cfg[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    cfg[3].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    cfg[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    cfg[4].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    cfg[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    cfg[5].attributeData.samplingDataBufferData.samplingDataBuffer = &cfgData;
    cfg[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    cfg[6].attributeData.scratchBufferSizeData.scratchBufferSize = size_t(64) << 20;
    CUpti_PCSamplingConfigurationInfoParams cp{};
    cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    cp.ctx = ctx;
    cp.numAttributes = cfg.size();
    cp.pPCSamplingConfigurationInfo = cfg.data();
    CUptiResult cr = cuptiPCSamplingSetConfigurationAttribute(&cp);
    if (cr != CUPTI_SUCCESS) {
        for (auto& c : cfg) std::printf("PCS config attr %d status %d\n", int(c.attributeType), int(c.attributeStatus));
        std::printf("PCS config failed %d\n", int(cr));
        std::exit(3);
    }

    probeKernel<<<w.blocks, w.threads>>>(w.in, w.out, w.n, 2, w.stamps);  // load module outside the range
    CK(cudaDeviceSynchronize());
    CUpti_PCSamplingStartParams sp{};
    sp.size = CUpti_PCSamplingStartParamsSize;
    sp.ctx = ctx;
    CU(cuptiPCSamplingStart(&sp));
    for (int rep = 0; rep < 3; ++rep) probeKernel<<<w.blocks, w.threads>>>(w.in, w.out, w.n, 40, w.stamps);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CUpti_PCSamplingStopParams stp{};
    stp.size = CUpti_PCSamplingStopParamsSize;
    stp.ctx = ctx;
    CU(cuptiPCSamplingStop(&stp));

    // Drain.
    std::map<std::string, uint64_t> byReason;
    struct PcRow { uint64_t off; std::string fn; uint64_t crc; uint64_t samples; };
    std::vector<PcRow> rows;
    uint64_t total = 0, dropped = 0, nonUsr = 0;
    int rounds = 0;
    bool hwFull = false;
    std::printf("PCS after stop: config buffer totalNumPcs=%zu remaining=%zu totalSamples=%" PRIu64 "\n", cfgData.totalNumPcs, cfgData.remainingNumPcs, cfgData.totalSamples);
    do {
        {
            CUpti_PCSamplingGetDataParams gd{};
            gd.size = CUpti_PCSamplingGetDataParamsSize;
            gd.ctx = ctx;
            gd.pcSamplingData = &data;
            CUptiResult gr2 = cuptiPCSamplingGetData(&gd);
            if (gr2 != CUPTI_SUCCESS) { std::printf("PCS GetData returned %d\n", int(gr2)); if (gr2 != CUPTI_ERROR_OUT_OF_MEMORY) break; }
        }
        ++rounds;
        total += data.totalSamples; dropped += data.droppedSamples; nonUsr += data.nonUsrKernelsTotalSamples;
        hwFull |= data.hardwareBufferFull != 0;
        for (size_t i = 0; i < data.totalNumPcs; ++i) {
            auto& pc = pcData[i];
            uint64_t s = 0;
            for (size_t j = 0; j < pc.stallReasonCount; ++j) {
                s += pc.stallReason[j].samples;
                byReason[reasonName[pc.stallReason[j].pcSamplingStallReasonIndex]] += pc.stallReason[j].samples;
            }
            rows.push_back({pc.pcOffset, pc.functionName ? pc.functionName : "", pc.cubinCrc, s});
        }
    } while (data.remainingNumPcs > 0 && rounds < 100);
    std::printf("PCS period=2^%d cycles rounds=%d pcs=%zu totalSamples=%" PRIu64 " dropped=%" PRIu64 " nonUsr=%" PRIu64 " hwBufferFull=%d\n",
                periodExp, rounds, rows.size(), total, dropped, nonUsr, int(hwFull));
    std::vector<std::pair<uint64_t, std::string>> rs;
    for (auto& [n, c] : byReason) rs.push_back({c, n});
    std::sort(rs.rbegin(), rs.rend());
    for (size_t i = 0; i < rs.size() && i < 8; ++i) std::printf("PCS reason %s: %" PRIu64 "\n", rs[i].second.c_str(), rs[i].first);

    std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.samples > b.samples; });
    int ok = 0, bad = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        const Module* mod = nullptr;
        for (auto& m : g_modules) if (m.crc == rows[i].crc) mod = &m;
        CUpti_GetSassToSourceCorrelationParams sc{};
        sc.size = CUpti_GetSassToSourceCorrelationParamsSize;
        sc.cubin = mod ? mod->cubin.data() : nullptr;
        sc.cubinSize = mod ? mod->cubin.size() : 0;
        sc.functionName = rows[i].fn.c_str();
        sc.pcOffset = rows[i].off;
        CUptiResult rr = mod ? cuptiGetSassToSourceCorrelation(&sc) : CUPTI_ERROR_INVALID_PARAMETER;
        if (rr == CUPTI_SUCCESS) ++ok; else ++bad;
        if (i < 6)
            std::printf("PCS pc fn=%s off=0x%" PRIx64 " samples=%" PRIu64 " module=%s -> %s %s:%u\n", rows[i].fn.c_str(), rows[i].off, rows[i].samples,
                        mod ? "found" : "MISSING", rr == CUPTI_SUCCESS ? "src" : "nosrc", rr == CUPTI_SUCCESS && sc.fileName ? sc.fileName : "", sc.lineNumber);
        if (rr == CUPTI_SUCCESS) { free(sc.fileName); free(sc.dirName); }
    }
    std::printf("PCS source correlation ok=%d failed=%d modules=%zu\n", ok, bad, g_modules.size());

    CUpti_PCSamplingDisableParams dp{};
    dp.size = CUpti_PCSamplingDisableParamsSize;
    dp.ctx = ctx;
    CU(cuptiPCSamplingDisable(&dp));
    std::printf("PCS after disable: config buffer totalNumPcs=%zu totalSamples=%" PRIu64 "\n", cfgData.totalNumPcs, cfgData.totalSamples);
    cuptiUnsubscribe(sub);
}

int main(int argc, char** argv)
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::string mode = argc > 1 ? argv[1] : "info";
    int period = argc > 2 ? std::atoi(argv[2]) : 8;  // 2^period cycles, 5..31
    int nDev = 0;
    cudaError_t e = cudaGetDeviceCount(&nDev);
    if (e != cudaSuccess || nDev == 0) { std::printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(e)); return 77; }
    if (mode == "info") info();
    else if (mode == "activity") activity(false);
    else if (mode == "pcs") pcs(period, !(argc > 3 && std::string(argv[3]) == "cont"));
    else if (mode == "both") { activity(true); pcs(period, true); }
    else { std::printf("unknown mode %s\n", mode.c_str()); return 1; }
    std::printf("DONE %s\n", mode.c_str());
    return 0;
}
