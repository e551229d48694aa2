// generateSyntheticProgram (synthetic.h): a deterministic PyTorch-like program run at program level.
#include "warpstage/synthetic.h"

#include "warpstage/store.h"

#include <array>
#include <algorithm>
#include <random>

namespace ws {

namespace {

struct KernelKind {
    const char* name;
    TimeNs meanNs;
    int grid, block;
};

// ~20 names, the kind of thing a transformer step launches (demangled as CUPTI reports them).
const std::array<KernelKind, 20> kKernels = {{
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 42000, 132, 384},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 61000, 132, 384},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> > > > > >(cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int> >::Params)", 55000, 132, 384},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", 1800, 528, 128},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)", 3200, 1056, 128},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)", 4100, 1056, 128},
    {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})", 2500, 1056, 128},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)", 6000, 264, 512},
    {"void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)", 7500, 2048, 128},
    {"void (anonymous namespace)::softmax_warp_backward<c10::BFloat16, c10::BFloat16, float, 11, false, false>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, int, int, int, bool const*)", 8200, 2048, 128},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)", 5200, 4096, 256},
    {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)", 6100, 4096, 256},
    {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", 38000, 512, 128},
    {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, false, true, false, false, false, true, false, false>(pytorch_flash::Flash_bwd_params)", 91000, 512, 256},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, float, float, float, float, float, float, float*, float*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, float, float, float, float, float, float, float*, float*)", 12000, 320, 512},
    {"void at::native::unrolled_elementwise_kernel<at::native::MulFunctor<float>, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1>)", 2900, 1056, 128},
    {"void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1})", 3600, 512, 128},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, void*, long, float*, int*)", 2100, 132, 128},
    {"void at::native::(anonymous namespace)::cross_entropy_loss_forward_kernel<float>(float const*, long const*, float*, float*, long)", 4400, 128, 256},
    {"warpspecialized_gemm", 48000, 132, 384},
}};

}  // namespace

ProgramTrace generateSyntheticProgram(const SyntheticProgramParams& params)
{
    ProgramTrace p;
    p.run.id = 1;
    p.run.kind = RunKind::Program;
    p.run.synthetic = true;
    p.run.program = "python3";
    p.run.commandLine = "python3 train.py --steps " + std::to_string(params.steps);
    p.run.notes = "SYNTHETIC program run (generateSyntheticProgram): not a measurement";
    p.run.device.name = "NVIDIA H200 (synthetic)";
    p.run.pid = 4242;
    std::mt19937_64 rng(params.seed);
    std::uniform_real_distribution<double> jitter(0.7, 1.3);
    std::uniform_int_distribution<int> pick(3, int(kKernels.size()) - 1);
    const int nStreams = std::max(1, params.streams);
    for (int s = 0; s < nStreams; ++s) {
        StreamInfo si;
        si.id = s + 1;
        si.runId = 1;
        si.streamId = std::uint32_t(7 + s);
        si.isDefault = s == 0;
        if (s == 1)
            si.name = "comm";
        p.streams.push_back(si);
    }
    const std::uint32_t mainThread = 31337;
    std::uint32_t corr = 1;
    std::vector<TimeNs> streamFree(std::size_t(nStreams), params.start);
    TimeNs cpu = params.start;
    std::vector<int> launchIndexOf(kKernels.size(), 0);
    auto nvtx = [&](const std::string& name, TimeNs a, TimeNs b, int depth) {
        NvtxRange r;
        r.runId = 1;
        r.name = name;
        r.start = a;
        r.end = b;
        r.threadId = mainThread;
        r.depth = depth;
        p.nvtx.push_back(r);
    };
    auto memop = [&](MemOpKind kind, std::int64_t bytes, TimeNs dur) {
        ApiSpan api;
        api.runId = 1;
        api.name = kind == MemOpKind::Memset ? "cudaMemsetAsync" : "cudaMemcpyAsync";
        api.start = cpu;
        api.end = cpu + 3000;
        api.threadId = mainThread;
        api.correlationId = corr;
        p.apiSpans.push_back(api);
        MemOp m;
        m.runId = 1;
        m.kind = kind;
        m.bytes = bytes;
        m.start = std::max(streamFree[0], cpu + 2000);
        m.end = m.start + dur;
        m.streamId = 7;
        m.correlationId = corr++;
        streamFree[0] = m.end;
        p.memOps.push_back(m);
        cpu += 4000;
    };
    auto launch = [&](int kind, int stream) {
        const KernelKind& kk = kKernels[std::size_t(kind)];
        ApiSpan api;
        api.runId = 1;
        api.name = "cudaLaunchKernel";
        api.start = cpu;
        api.end = cpu + 2500 + TimeNs(rng() % 1500);
        api.threadId = mainThread;
        api.correlationId = corr;
        p.apiSpans.push_back(api);
        KernelLaunch k;
        k.id = RowId(p.kernels.size() + 1);
        k.runId = 1;
        k.name = kk.name;
        k.grid[0] = kk.grid;
        k.block[0] = kk.block;
        k.streamId = std::uint32_t(7 + stream);
        k.correlationId = corr++;
        k.start = std::max(streamFree[std::size_t(stream)], api.start + 4000);
        k.end = k.start + TimeNs(double(kk.meanNs) * jitter(rng));
        k.launchIndex = launchIndexOf[std::size_t(kind)]++;
        k.traced = !params.tracedName.empty() && k.name.find(params.tracedName) != std::string::npos;
        streamFree[std::size_t(stream)] = k.end + 1000;
        p.kernels.push_back(k);
        cpu = api.end + 500;
    };
    for (int step = 0; step < params.steps; ++step) {
        const TimeNs stepStart = cpu;
        memop(MemOpKind::HtoD, 64 << 20, 180000);
        const int n = std::max(3, params.launchesPerStep);
        const int fwd = n * 2 / 5, bwd = n * 2 / 5;
        const TimeNs fStart = cpu;
        for (int i = 0; i < n; ++i) {
            if (i == fwd || i == fwd + bwd) {
                // phase boundary: close the previous phase range
                const TimeNs e = *std::max_element(streamFree.begin(), streamFree.end());
                nvtx(i == fwd ? "forward" : "backward", i == fwd ? fStart : p.nvtx.back().end, e, 1);
                cpu = std::max(cpu, e);
            }
            int kind;
            if (i >= fwd + bwd)
                kind = 14;  // optimizer: fused Adam
            else if (i % 7 == 0)
                kind = int(std::size_t(i / 7) % 3);  // GEMMs
            else if (i % 7 == 3)
                kind = i < fwd ? 12 : 13;  // flash attention fwd / bwd
            else if (i % 11 == 0)
                kind = 19;
            else
                kind = pick(rng);
            launch(kind, (i % 5 == 4 && nStreams > 1) ? 1 + int(std::size_t(i) % std::size_t(nStreams - 1)) : 0);
        }
        const TimeNs oStart = p.nvtx.back().end;
        const TimeNs stepEnd = *std::max_element(streamFree.begin(), streamFree.end());
        nvtx("optimizer", oStart, stepEnd, 1);
        cpu = std::max(cpu, stepEnd);
        memop(MemOpKind::DtoH, 4, 2000);
        memop(MemOpKind::Memset, 1 << 20, 1500);
        nvtx("step " + std::to_string(step), stepStart, std::max(cpu, streamFree[0]), 0);
        cpu += 250000;  // data loading on the CPU: the GPU idles
    }
    auto byStart = [](const auto& a, const auto& b) { return a.start < b.start; };
    std::stable_sort(p.kernels.begin(), p.kernels.end(), byStart);
    std::stable_sort(p.memOps.begin(), p.memOps.end(), byStart);
    std::stable_sort(p.nvtx.begin(), p.nvtx.end(), byStart);
    std::stable_sort(p.apiSpans.begin(), p.apiSpans.end(), byStart);
    p.run.processStart = p.firstStart();
    p.run.processEnd = p.lastEnd();
    p.run.exitCode = 0;
    return p;
}

RowId writeSyntheticProgram(TraceStore& store, const SyntheticProgramParams& params)
{
    const ProgramTrace p = generateSyntheticProgram(params);
    RunInfo info = p.run;
    info.id = 0;
    info.hasTimeline = false;
    RunWriter w = store.beginRun(info);
    w.addLaunches(p.kernels);
    w.addMemOps(p.memOps);
    w.addStreams(p.streams);
    w.addNvtxRanges(p.nvtx);
    w.addApiSpans(p.apiSpans);
    w.setProcessEnd(p.run.processStart, p.run.processEnd, 0, 0);
    w.setNotes(p.run.notes);
    const RowId id = w.runId();
    w.commit();
    return id;
}

}  // namespace ws
