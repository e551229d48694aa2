// tst_program: program-level analysis (core/include/warpstage/program.h): kernel families, the kernel
// summary table, idle gaps and GPU busy time, ProgramTrace::firstStart/lastEnd. Every expected number is
// worked out by hand in the comment next to it.
#include "warpstage/program.h"

#include <QtTest>

using namespace ws;

namespace {

KernelLaunch launch(const char* name, TimeNs start, TimeNs end, std::uint32_t stream = 7, bool traced = false)
{
    KernelLaunch k;
    k.name = name;
    k.start = start;
    k.end = end;
    k.streamId = stream;
    k.traced = traced;
    return k;
}

MemOp memop(TimeNs start, TimeNs end, MemOpKind kind = MemOpKind::HtoD)
{
    MemOp m;
    m.kind = kind;
    m.start = start;
    m.end = end;
    m.bytes = 1024;
    return m;
}

}  // namespace

class TstProgram : public QObject {
    Q_OBJECT
private slots:
    void family_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("family");
        QTest::newRow("header example") << "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                                           "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"
                                        << "at::native::vectorized_elementwise_kernel";
        QTest::newRow("no parameter list") << "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
                                           << "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
        QTest::newRow("nested templates") << "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int>, "
                                             "cutlass::gemm::collective::CollectiveMma<cute::tuple<cute::C<128>, cute::C<128> > > > >"
                                             "(cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int> >::Params)"
                                          << "cutlass::device_kernel";
        QTest::newRow(">> closes two") << "void foo::bar<baz<int>>(int)" << "foo::bar";
        QTest::newRow("anonymous namespace") << "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>"
                                                "(float*, float const*, int, int, int, bool const*, int, bool)"
                                             << "softmax_warp_forward";
        QTest::newRow("anonymous namespace inside") << "void at::(anonymous namespace)::reduce_kernel<512, 1>(int)"
                                                    << "at::reduce_kernel";
        QTest::newRow("call operator") << "void Functor::operator()<4>(int) const" << "Functor::operator()";
        QTest::newRow("operator< with template") << "void ns::operator< <int>(int)" << "ns::operator<";
        QTest::newRow("operator<< with template") << "void ns::operator<< <int>(int)" << "ns::operator<<";
        QTest::newRow("operator<< no space") << "void ns::operator<<<int>(int)" << "ns::operator<<";
        QTest::newRow("operator== plain") << "bool ns::operator==(ns::A const&, ns::A const&)" << "ns::operator==";
        QTest::newRow("lambda in template args") << "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
                                                    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
                                                    "operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
                                                    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
                                                    "operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
                                                    "at::native::gpu_kernel_impl_nocast<int>(int)::{lambda(int)#1})"
                                                 << "at::native::elementwise_kernel";
        QTest::newRow("local lambda kernel") << "main::{lambda(int)#1}::operator()(int) const" << "main::{lambda(int)#1}::operator()";
        QTest::newRow("local entity") << "void outer(int)::inner<float>(float*)" << "outer::inner";
        QTest::newRow("plain C name") << "add_kernel" << "add_kernel";
        QTest::newRow("C name with params") << "add_kernel(float*, int)" << "add_kernel";
        QTest::newRow("empty") << "" << "";
    }
    void family()
    {
        QFETCH(QString, name);
        QFETCH(QString, family);
        QCOMPARE(QString::fromStdString(kernelFamily(name.toStdString())), family);
    }
    void familyGroupsInstantiations()
    {
        // two instantiations of one template share a family (one colour), another kernel does not
        QCOMPARE(kernelFamily("void k<1>(int)"), kernelFamily("void k<2, float>(int, float*)"));
        QVERIFY(kernelFamily("void k<1>(int)") != kernelFamily("void k2<1>(int)"));
    }

    void stats()
    {
        ProgramTrace p;
        // A: durations 10, 30, 20 (one traced) -> total 60, mean 20, min 10, max 30
        // B: durations 100 -> total 100
        // C: 0-length launch and one with end < start (clamped to 0): total 0, min 0, max 0
        p.kernels = {launch("void A<1>(int)", 0, 10), launch("B", 5, 105, 8), launch("void A<1>(int)", 200, 230, 7, true),
                     launch("void A<1>(int)", 300, 320), launch("C", 400, 400), launch("C", 500, 490)};
        const auto s = kernelStats(p);
        QCOMPARE(s.size(), std::size_t(3));
        // sorted by total: B (100), A (60), C (0)
        QCOMPARE(s[0].name, std::string("B"));
        QCOMPARE(s[0].totalNs, 100);
        QCOMPARE(s[0].launches, 1);
        QCOMPARE(s[1].name, std::string("void A<1>(int)"));
        QCOMPARE(s[1].family, std::string("A"));
        QCOMPARE(s[1].launches, 3);
        QCOMPARE(s[1].totalNs, 60);
        QCOMPARE(s[1].meanNs, 20.0);
        QCOMPARE(s[1].minNs, 10);
        QCOMPARE(s[1].maxNs, 30);
        QCOMPARE(s[1].tracedLaunches, 1);
        QCOMPARE(s[2].name, std::string("C"));
        QCOMPARE(s[2].launches, 2);
        QCOMPARE(s[2].totalNs, 0);
        QCOMPARE(s[2].minNs, 0);
        QCOMPARE(s[2].maxNs, 0);
        // shares over the sum of every kernel's time (160), not over busy time or wall time
        QCOMPARE(s[0].share, 100.0 / 160.0);
        QCOMPARE(s[1].share, 60.0 / 160.0);
        QCOMPARE(s[2].share, 0.0);
        // min and max when the first launch is neither: 50, 5, 70 -> min 5, max 70
        ProgramTrace q;
        q.kernels = {launch("D", 0, 50), launch("D", 100, 105), launch("D", 200, 270)};
        const auto d = kernelStats(q);
        QCOMPARE(d[0].minNs, 5);
        QCOMPARE(d[0].maxNs, 70);
    }
    void statsTiesByName()
    {
        ProgramTrace p;
        p.kernels = {launch("zeta", 0, 50), launch("alpha", 100, 150), launch("mid", 200, 250)};
        const auto s = kernelStats(p);
        QCOMPARE(s.size(), std::size_t(3));
        QCOMPARE(s[0].name, std::string("alpha"));
        QCOMPARE(s[1].name, std::string("mid"));
        QCOMPARE(s[2].name, std::string("zeta"));
    }
    void statsEmpty()
    {
        ProgramTrace p;
        QVERIFY(kernelStats(p).empty());
        p.kernels = {launch("z", 10, 10)};
        const auto s = kernelStats(p);
        QCOMPARE(s.size(), std::size_t(1));
        QCOMPARE(s[0].share, 0.0);  // no kernel time at all: share 0, not NaN
        QCOMPARE(s[0].meanNs, 0.0);
    }

    void busyAndGapsTwoStreams()
    {
        ProgramTrace p;
        p.run.deviceOrdinal = 3;
        // stream 7: [0,100) [300,400)      stream 8: [50,150) [600,700)     memcpy: [140,200) [1000,1010)
        // union: [0,200) [300,400) [600,700) [1000,1010) -> busy 200+100+100+10 = 410
        // gaps: [200,300) 100, [400,600) 200, [700,1000) 300
        p.kernels = {launch("a", 0, 100, 7), launch("b", 50, 150, 8), launch("a", 300, 400, 7), launch("b", 600, 700, 8)};
        p.memOps = {memop(140, 200), memop(1000, 1010, MemOpKind::DtoH)};
        QCOMPARE(gpuBusyNs(p), TimeNs(410));
        auto g = idleGaps(p, 0);
        QCOMPARE(g.size(), std::size_t(3));
        QCOMPARE(g[0].start, TimeNs(200));
        QCOMPARE(g[0].end, TimeNs(300));
        QCOMPARE(g[0].deviceOrdinal, 3);
        QCOMPARE(g[1].start, TimeNs(400));
        QCOMPARE(g[1].end, TimeNs(600));
        QCOMPARE(g[2].start, TimeNs(700));
        QCOMPARE(g[2].end, TimeNs(1000));
        // minimum gap: 200 keeps [400,600) (exactly 200) and [700,1000); 201 keeps only the last
        g = idleGaps(p, 200);
        QCOMPARE(g.size(), std::size_t(2));
        QCOMPARE(g[0].start, TimeNs(400));
        QCOMPARE(g[1].start, TimeNs(700));
        g = idleGaps(p, 201);
        QCOMPARE(g.size(), std::size_t(1));
        QCOMPARE(g[0].end, TimeNs(1000));
    }
    void busyNested()
    {
        ProgramTrace p;
        // [0,1000) contains [100,200) and [900,1100): union [0,1100) = 1100, no gap; touching [1100,1200) -> 1200
        p.kernels = {launch("long", 0, 1000, 7), launch("in", 100, 200, 8), launch("tail", 900, 1100, 9), launch("touch", 1100, 1200, 7)};
        QCOMPARE(gpuBusyNs(p), TimeNs(1200));
        QVERIFY(idleGaps(p, 0).empty());
    }
    void busyEmpty()
    {
        ProgramTrace p;
        QCOMPARE(gpuBusyNs(p), TimeNs(0));
        QVERIFY(idleGaps(p, 0).empty());
        p.memOps = {memop(5, 25)};
        QCOMPARE(gpuBusyNs(p), TimeNs(20));  // memory operations alone are busy time too
        QVERIFY(idleGaps(p, 0).empty());      // no gap before the first or after the last record
    }
    // Where a program view opens (busiestBurst): the stretch between idle gaps of >= 10 % of the run's span that holds the
    // most GPU busy time, when it covers < 50 % of the span and holds >= 2/3 of the busy time.
    void busiestBurstOfAMostlyIdleRun()
    {
        ProgramTrace p;
        // lce-like: set-up kernels [0,2000), an API span to 100000 (host work), then 13 iterations of 2000 with
        // 500 between them from 93000: [93000 + 2500 i, 95000 + 2500 i), i = 0..12 -> burst [93000, 125000), busy 26000;
        // span [0, 125000): gaps >= 12500 split it there (the only one: [2000, 93000)); 32000 < 62500
        p.kernels = {launch("fill", 0, 1000), launch("pad", 1000, 2000)};
        for (int i = 0; i < 13; ++i)
            p.kernels.push_back(launch("gemm", 93000 + 2500 * i, 95000 + 2500 * i));
        ApiSpan api;
        api.start = 0;
        api.end = 100000;
        p.apiSpans = {api};
        auto b = busiestBurst(p);
        QVERIFY(b.has_value());
        QCOMPARE(b->start, TimeNs(93000));
        QCOMPARE(b->end, TimeNs(125000));
        QCOMPARE(b->busyNs, TimeNs(26000));
        // the busier of two bursts wins even when it comes first: a 30000-long kernel at [2000, 32000) joins the
        // set-up burst [0, 32000) (busy 32000 > 26000; span 32000 < 62500); but it holds 32000 of 58000 busy (55 %),
        // under the default 2/3: two bursts of GPU work, the whole run is the view; at minBusyFraction 0.5 it is
        p.kernels.push_back(launch("big", 2000, 32000));
        QVERIFY(!busiestBurst(p).has_value());
        b = busiestBurst(p, 0.1, 0.5, 0.5);
        QVERIFY(b.has_value());
        QCOMPARE(b->start, TimeNs(0));
        QCOMPARE(b->end, TimeNs(32000));
        QCOMPARE(b->busyNs, TimeNs(32000));
        // a gap below the threshold does not split: minGapFraction 0.8 (100000) keeps one burst of the whole GPU
        // work, [0, 125000) = the span: no burst to open on
        QVERIFY(!busiestBurst(p, 0.8, 0.5, 0.5).has_value());
    }
    void busiestBurstNotForABusyRun()
    {
        ProgramTrace p;
        QVERIFY(!busiestBurst(p).has_value());  // empty run
        // busy almost throughout: [0,450) [500,1000), the gap 50 < 100 (10 % of 1000): one burst, the whole span
        p.kernels = {launch("a", 0, 450), launch("b", 500, 1000)};
        QVERIFY(!busiestBurst(p).has_value());
        // [0,100) [300,400) [600,700) [1000,1010) (busyAndGapsTwoStreams), span 1010: gaps >= 101 are [400,600) and
        // [700,1000) ([200,300) is 100); bursts [0,400) busy 300, [600,700) 100, [1000,1010) 10: the first, 400 < 505,
        // holding 300 of 410 busy (73 %) >= 2/3; at minBusyFraction 0.75 the whole run instead
        p.kernels = {launch("a", 0, 100, 7), launch("b", 50, 150, 8), launch("a", 300, 400, 7), launch("b", 600, 700, 8)};
        p.memOps = {memop(140, 200), memop(1000, 1010, MemOpKind::DtoH)};
        QVERIFY(!busiestBurst(p, 0.1, 0.5, 0.75).has_value());
        auto b = busiestBurst(p);
        QVERIFY(b.has_value());
        QCOMPARE(b->start, TimeNs(0));
        QCOMPARE(b->end, TimeNs(400));
        QCOMPARE(b->busyNs, TimeNs(300));
        // but with maxSpanFraction 0.39 (394 <= 400) it covers too much of the run to zoom to
        QVERIFY(!busiestBurst(p, 0.1, 0.39).has_value());
    }
    void nvtxIsNotGpuTime()
    {
        ProgramTrace p;
        p.kernels = {launch("a", 100, 200)};
        NvtxRange r;
        r.start = 0;
        r.end = 10000;
        p.nvtx = {r};
        ApiSpan api;
        api.start = 50;
        api.end = 60;
        p.apiSpans = {api};
        QCOMPARE(gpuBusyNs(p), TimeNs(100));
        // but the program's extent covers them
        QCOMPARE(p.firstStart(), TimeNs(0));
        QCOMPARE(p.lastEnd(), TimeNs(10000));
    }
    void extent()
    {
        ProgramTrace p;
        QCOMPARE(p.firstStart(), TimeNs(0));
        QCOMPARE(p.lastEnd(), TimeNs(0));
        p.kernels = {launch("a", 5000, 6000)};
        p.memOps = {memop(4000, 4500), memop(7000, 7100)};
        QCOMPARE(p.firstStart(), TimeNs(4000));
        QCOMPARE(p.lastEnd(), TimeNs(7100));
        ApiSpan api;
        api.start = 3000;
        api.end = 3100;
        p.apiSpans = {api};
        QCOMPARE(p.firstStart(), TimeNs(3000));
    }
};

QTEST_GUILESS_MAIN(TstProgram)
#include "tst_program.moc"
