// The injection library's sink format and its CUDA-free reader (warpstage/sink_reader.h): hand-built sinks
// (round trip of every record type into RunRecords), cut-off files, several processes and devices, NVTX
// pairing, how a process ended -> Complete/Incomplete, API span selection, --duration / --nvtx-range windows.
#include "sink_builder.h"
#include "warpstage/sink_encode.h"
#include "warpstage/sink_reader.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace ws;
using namespace ws::sink;

namespace {

// A typical process: 2 kernels + a memcpy + a graph launch, NVTX ranges, clean end.
Builder typical(std::int64_t pid)
{
    Builder b(pid);
    b.device(0, "NVIDIA H200");
    b.nvtx(NvtxOp::Push, 10, "outer");
    b.api("cudaLaunchKernel", 20, 5);
    b.nvtx(NvtxOp::Push, 25, "inner");
    b.api("cudaLaunchKernel", 30, 6);
    b.nvtx(NvtxOp::Mark, 32, "m");
    b.nvtx(NvtxOp::Pop, 35);
    b.api("cudaMemcpyAsync", 40, 7);
    b.api("cudaGetDevice", 41, 8);            // launched nothing: not kept
    b.api("cudaGraphLaunch", 42, 9);          // kept although no kernel names it here
    b.api("cudaStreamSynchronize", 43, 10);   // kept
    b.flush();
    b.kernel("_Z6kernelPfi", 100, 50, 5);
    b.kernel("_Z6kernelPfi", 160, 40, 6);
    b.mem(1, 200, 7);
    b.nvtx(NvtxOp::Pop, 300);
    b.end();
    return b;
}

}  // namespace

class TstSink : public QObject {
    Q_OBJECT
private slots:
    void roundTrip()
    {
        QTemporaryDir dir;
        typical(100).save(dir.path(), "100-1.wsink");
        const auto sinks = readSinkDir(dir.path().toStdString());
        QCOMPARE(sinks.size(), std::size_t(1));
        const SinkProcess& s = sinks[0];
        QVERIFY(s.hasProcess);
        QVERIFY(s.ended);
        QVERIFY(!s.truncated);
        QVERIFY(s.error.empty());
        QCOMPARE(s.pid, std::int64_t(100));
        QCOMPARE(s.exe, std::string("/usr/bin/app"));
        QCOMPARE(s.cwd, std::string("/work"));
        QCOMPARE(s.argv, (std::vector<std::string>{"./app", "--x"}));
        QCOMPARE(s.kernels.size(), std::size_t(2));
        QCOMPARE(s.mem.size(), std::size_t(1));
        QCOMPARE(s.api.size(), std::size_t(6));
        QCOMPARE(s.nvtx.size(), std::size_t(5));
        QCOMPARE(s.devices.size(), std::size_t(1));
        QCOMPARE(s.contexts.size(), std::size_t(1));
        QCOMPARE(s.flushes, std::uint64_t(1));

        ConvertOptions o;
        o.outcome.rootPid = 100;
        o.outcome.exitCode = 0;
        o.commandLine = "warpstage-record -o x -- ./app --x";
        const auto res = toRuns(sinks, o);
        QCOMPARE(res.runs.size(), std::size_t(1));
        const RunRecord& r = res.runs[0];
        QCOMPARE(r.info.kind, RunKind::Program);
        QCOMPARE(r.info.status, RunStatus::Complete);
        QVERIFY(r.info.failureReason.empty());
        QCOMPARE(r.info.pid, std::int64_t(100));
        QCOMPARE(r.info.parentPid, std::int64_t(1));
        QCOMPARE(r.info.program, std::string("./app"));
        QCOMPARE(r.info.workingDir, std::string("/work"));
        QCOMPARE(r.info.exitCode, 0);
        QCOMPARE(r.info.device.name, std::string("NVIDIA H200"));
        QCOMPARE(r.info.device.smCount, 132);
        QCOMPARE(r.info.deviceUuid, std::string("GPU-ab000000-0000-0000-0000-000000000001"));
        QCOMPARE(r.info.commandLine, o.commandLine);
        QCOMPARE(r.kernels.size(), std::size_t(2));
        const KernelLaunch& k = r.kernels[0].launch;
        QCOMPARE(k.name, std::string("kernel(float*, int)"));
        QCOMPARE(k.start, TimeNs(kT0 + 100));
        QCOMPARE(k.end, TimeNs(kT0 + 150));
        QCOMPARE(k.grid[0], 132);
        QCOMPARE(k.block[0], 384);
        QCOMPARE(k.cluster[0], 2);
        QCOMPARE(k.registersPerThread, 168);
        QCOMPARE(k.dynamicSmemBytes, 200000);
        QCOMPARE(k.correlationId, 5u);
        QCOMPARE(k.contextId, 1u);
        QCOMPARE(k.launchIndex, 0);
        QCOMPARE(r.kernels[1].launch.launchIndex, 1);
        QCOMPARE(r.memOps.size(), std::size_t(1));
        QCOMPARE(r.memOps[0].kind, MemOpKind::HtoD);
        QCOMPARE(r.memOps[0].bytes, std::int64_t(4096));
        // API spans: the two launches, the copy, the graph launch and the sync; not cudaGetDevice.
        QCOMPARE(r.apiSpans.size(), std::size_t(5));
        for (const auto& a : r.apiSpans) QVERIFY(a.name != "cudaGetDevice");
        QCOMPARE(r.apiSpans[0].correlationId, 5u);
        QCOMPARE(r.apiSpans[0].threadId, 11u);
        // Streams: (context 1, stream 7), the context's null stream.
        QCOMPARE(r.streams.size(), std::size_t(1));
        QVERIFY(r.streams[0].isDefault);
        // NVTX: outer (depth 0) contains inner (depth 1) and the mark.
        QCOMPARE(r.nvtx.size(), std::size_t(3));
        QCOMPARE(r.nvtx[0].name, std::string("outer"));
        QCOMPARE(r.nvtx[0].depth, 0);
        QCOMPARE(r.nvtx[0].end, TimeNs(kT0 + 300));
        QCOMPARE(r.nvtx[0].color, 0xff00ff00u);
        QCOMPARE(r.nvtx[1].name, std::string("inner"));
        QCOMPARE(r.nvtx[1].depth, 1);
        QCOMPARE(r.nvtx[1].end, TimeNs(kT0 + 35));
        QCOMPARE(r.nvtx[2].kind, NvtxKind::Mark);
        QCOMPARE(r.nvtx[2].depth, 2);
        QVERIFY(r.nvtx[0].closed && r.nvtx[1].closed);
        QCOMPARE(r.info.processStart, TimeNs(kT0 + 10));
        QCOMPARE(r.info.processEnd, TimeNs(kT0 + 300));
    }

    void truncatedSinkIsIncomplete()
    {
        QTemporaryDir dir;
        Builder b = typical(100);
        b.out.resize(b.out.size() - 32 - 20);  // the End record (32 bytes) gone, the last NVTX pop cut in half
        b.save(dir.path(), "100-1.wsink");
        const auto sinks = readSinkDir(dir.path().toStdString());
        QVERIFY(sinks[0].truncated);
        QVERIFY(!sinks[0].ended);
        QCOMPARE(sinks[0].kernels.size(), std::size_t(2));  // what came before is kept
        ConvertOptions o;
        o.outcome.rootPid = 100;
        o.outcome.exitCode = 0;
        const auto res = toRuns(sinks, o);
        QCOMPARE(res.runs.size(), std::size_t(1));
        QCOMPARE(res.runs[0].info.status, RunStatus::Incomplete);
        QVERIFY(res.runs[0].info.failureReason.find("sink truncated") != std::string::npos);
        // the range still open at the cut ends at the last record and is marked open
        bool open = false;
        for (const auto& n : res.runs[0].nvtx) open = open || (!n.closed && n.name == "outer");
        QVERIFY(open);
    }

    void cutInsideAHeaderAndEmptyAndForeignFiles()
    {
        QTemporaryDir dir;
        Builder b = typical(100);
        const std::size_t full = b.out.size();
        b.out.resize(full - 20);  // inside the End record's payload
        b.save(dir.path(), "a.wsink");
        b.out.resize(sizeof(FileHeader) + 3);  // inside the first record header
        b.save(dir.path(), "b.wsink");
        std::ofstream(dir.path().toStdString() + "/c.wsink") << "";
        std::ofstream(dir.path().toStdString() + "/d.wsink") << "SQLite format 3 and more bytes";
        std::ofstream(dir.path().toStdString() + "/e.txt") << "not a sink name";
        const auto sinks = readSinkDir(dir.path().toStdString());
        QCOMPARE(sinks.size(), std::size_t(4));
        QVERIFY(sinks[0].truncated && sinks[0].hasProcess);
        QVERIFY(sinks[1].truncated && !sinks[1].hasProcess);
        QVERIFY(sinks[2].truncated && !sinks[2].hasProcess);
        QVERIFY(!sinks[3].error.empty());
        const auto res = toRuns(sinks, {});
        QCOMPARE(res.runs.size(), std::size_t(1));
        QCOMPARE(res.warnings.size(), std::size_t(3));
    }

    void twoProcessesTwoRuns()
    {
        QTemporaryDir dir;
        typical(100).save(dir.path(), "100-1.wsink");
        Builder child(200, 100, {"python3", "worker.py"});
        child.device(0, "NVIDIA H200");
        child.api("cudaLaunchKernel", 500, 5);  // same correlation id as the parent's: other process
        child.kernel("_Z6workerv", 600, 10, 5);
        child.flush();  // no End record: ended without a final flush
        child.save(dir.path(), "200-1.wsink");
        ConvertOptions o;
        o.outcome.rootPid = 100;
        o.outcome.exitCode = 0;
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), o);
        QCOMPARE(res.runs.size(), std::size_t(2));
        QCOMPARE(res.runs[0].info.pid, std::int64_t(100));
        QCOMPARE(res.runs[0].kernels.size(), std::size_t(2));
        QCOMPARE(res.runs[0].info.status, RunStatus::Complete);
        QCOMPARE(res.runs[1].info.pid, std::int64_t(200));
        QCOMPARE(res.runs[1].info.parentPid, std::int64_t(100));
        QCOMPARE(res.runs[1].info.program, std::string("python3"));
        QCOMPARE(res.runs[1].kernels.size(), std::size_t(1));
        QCOMPARE(res.runs[1].kernels[0].launch.name, std::string("worker()"));
        QCOMPARE(res.runs[1].apiSpans.size(), std::size_t(1));
        QCOMPARE(res.runs[1].info.exitCode, -1);  // not our child: unknown
        QCOMPARE(res.runs[1].info.status, RunStatus::Incomplete);
        QVERIFY(res.runs[1].info.failureReason.find("without a final flush") != std::string::npos);
    }

    void twoDevicesOneProcess()
    {
        QTemporaryDir dir;
        Builder b(300);
        b.device(0, "NVIDIA H200");
        b.device(1, "NVIDIA H200");
        b.nvtx(NvtxOp::Push, 1, "step");
        b.api("cudaLaunchKernel", 2, 1);
        b.api("cudaLaunchKernel", 3, 2);
        b.api("cudaDeviceSynchronize", 4, 3);
        b.kernel("k0", 10, 5, 1, 0);
        b.kernel("k1", 10, 5, 2, 1);
        b.mem(3, 20, 2, 1);
        b.nvtx(NvtxOp::Pop, 30);
        b.end();
        b.save(dir.path(), "300-1.wsink");
        ConvertOptions o;
        o.outcome.rootPid = 300;
        o.outcome.exitCode = 0;
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), o);
        QCOMPARE(res.runs.size(), std::size_t(2));
        const RunRecord& d0 = res.runs[0].info.deviceOrdinal == 0 ? res.runs[0] : res.runs[1];
        const RunRecord& d1 = res.runs[0].info.deviceOrdinal == 0 ? res.runs[1] : res.runs[0];
        QCOMPARE(d0.info.deviceOrdinal, 0);
        QCOMPARE(d1.info.deviceOrdinal, 1);
        QCOMPARE(d0.kernels.size(), std::size_t(1));
        QCOMPARE(d1.kernels.size(), std::size_t(1));
        QCOMPARE(d1.memOps.size(), std::size_t(1));
        QCOMPARE(d1.memOps[0].kind, MemOpKind::DtoD);
        QCOMPARE(d0.apiSpans.size(), std::size_t(2));  // its launch + the unmatched sync
        QCOMPARE(d1.apiSpans.size(), std::size_t(1));
        QCOMPARE(d0.nvtx.size(), std::size_t(1));  // NVTX goes to the lowest ordinal only
        QCOMPARE(d1.nvtx.size(), std::size_t(0));
    }

    void nvtxPairingPerThreadAndDomain()
    {
        QTemporaryDir dir;
        Builder b(400);
        b.api("cudaLaunchKernel", 0, 1);
        b.kernel("k", 1, 1, 1);
        b.nvtx(NvtxOp::Push, 10, "a-outer", 1);
        b.nvtx(NvtxOp::Push, 11, "b-outer", 2);
        b.nvtx(NvtxOp::Push, 12, "dom-range", 1, "mydomain");
        b.nvtx(NvtxOp::Push, 13, "a-inner", 1);
        b.nvtx(NvtxOp::Pop, 14, "", 2);              // b-outer
        b.nvtx(NvtxOp::Pop, 15, "", 1, "mydomain");  // dom-range (its own stack)
        b.nvtx(NvtxOp::Pop, 16, "", 1);              // a-inner
        b.nvtx(NvtxOp::Start, 17, "se", 3, "", 42);
        b.nvtx(NvtxOp::End, 18, "", 4, "", 42);      // ended on another thread: fine for start/end
        b.nvtx(NvtxOp::Pop, 19, "", 5);              // unbalanced: ignored, counted
        b.nvtx(NvtxOp::Start, 20, "never-ended", 3, "", 43);
        b.end();  // a-outer still open
        b.save(dir.path(), "400-1.wsink");
        ConvertOptions o;
        o.outcome.rootPid = 400;
        o.outcome.exitCode = 0;
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), o);
        QCOMPARE(res.runs.size(), std::size_t(1));
        std::map<std::string, NvtxRange> by;
        for (const auto& n : res.runs[0].nvtx) by[n.name] = n;
        QCOMPARE(by.size(), std::size_t(6));
        QCOMPARE(by["b-outer"].end, TimeNs(kT0 + 14));
        QCOMPARE(by["b-outer"].depth, 0);
        QCOMPARE(by["dom-range"].domain, std::string("mydomain"));
        QCOMPARE(by["dom-range"].end, TimeNs(kT0 + 15));
        QCOMPARE(by["dom-range"].depth, 0);
        QCOMPARE(by["a-inner"].depth, 1);
        QCOMPARE(by["a-inner"].end, TimeNs(kT0 + 16));
        QCOMPARE(by["se"].kind, NvtxKind::StartEnd);
        QCOMPARE(by["se"].end, TimeNs(kT0 + 18));
        QVERIFY(!by["a-outer"].closed);
        QVERIFY(!by["never-ended"].closed);
        QVERIFY(by["a-outer"].end >= TimeNs(kT0 + 20));
        QVERIFY(res.runs[0].info.notes.find("1 unbalanced NVTX") != std::string::npos);
    }

    void howTheProgramEnded_data()
    {
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<int>("signal");
        QTest::addColumn<bool>("timedOut");
        QTest::addColumn<bool>("ended");
        QTest::addColumn<QString>("reason");
        QTest::newRow("clean") << 0 << 0 << false << true << "";
        QTest::newRow("exit 3") << 3 << 0 << false << true << "exit code 3";
        QTest::newRow("SIGKILL") << -1 << 9 << false << false << "killed by SIGKILL (signal 9)";
        QTest::newRow("SIGSEGV") << -1 << 11 << false << true << "killed by SIGSEGV (signal 11)";
        QTest::newRow("timeout") << -1 << 15 << true << true << "timeout after 30 s (the program was stopped); killed by SIGTERM (signal 15)";
        QTest::newRow("exit 0 without flush (_exit)") << 0 << 0 << false << false
                                                      << "the process ended without a final flush (crashed, killed or _exit): its last second may be missing";
    }
    void howTheProgramEnded()
    {
        QFETCH(int, exitCode);
        QFETCH(int, signal);
        QFETCH(bool, timedOut);
        QFETCH(bool, ended);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        Builder b(500);
        b.api("cudaLaunchKernel", 0, 1);
        b.kernel("k", 1, 1, 1);
        if (ended) b.end(signal ? EndReason::Signal : EndReason::Exit, signal);
        b.save(dir.path(), "500-1.wsink");
        ConvertOptions o;
        o.outcome.rootPid = 500;
        o.outcome.exitCode = exitCode;
        o.outcome.exitSignal = signal;
        o.outcome.timedOut = timedOut;
        o.outcome.timeoutSeconds = 30;
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), o);
        QCOMPARE(res.runs.size(), std::size_t(1));
        const RunInfo& i = res.runs[0].info;
        QCOMPARE(QString::fromStdString(i.failureReason), reason);
        QCOMPARE(i.status, reason.isEmpty() ? RunStatus::Complete : RunStatus::Incomplete);
        QCOMPARE(i.exitCode, exitCode);
        QCOMPARE(i.exitSignal, signal);
    }

    void droppedRecordsMakeItIncomplete()
    {
        QTemporaryDir dir;
        Builder b = typical(600);
        b.flush(17);
        b.save(dir.path(), "600-1.wsink");
        ConvertOptions o;
        o.outcome.rootPid = 600;
        o.outcome.exitCode = 0;
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), o);
        QCOMPARE(res.runs[0].info.status, RunStatus::Incomplete);
        QVERIFY(res.runs[0].info.failureReason.find("CUPTI dropped 17 records") != std::string::npos);
    }

    void runtimeSpanPreferredOverDriver()
    {
        QTemporaryDir dir;
        Builder b(700);
        b.api("cuLaunchKernel", 1, 1, true);      // Triton-style: driver only
        b.api("cuLaunchKernel", 3, 2, true);      // both: the runtime call is kept
        b.api("cudaLaunchKernel", 2, 2, false);
        b.kernel("triton_k", 10, 1, 1);
        b.kernel("torch_k", 12, 1, 2);
        b.end();
        b.save(dir.path(), "700-1.wsink");
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), {});
        QCOMPARE(res.runs[0].apiSpans.size(), std::size_t(2));
        QCOMPARE(res.runs[0].apiSpans[0].name, std::string("cuLaunchKernel"));
        QVERIFY(res.runs[0].apiSpans[0].driver);
        QCOMPARE(res.runs[0].apiSpans[1].name, std::string("cudaLaunchKernel"));
        QVERIFY(!res.runs[0].apiSpans[1].driver);
    }

    void windows()
    {
        QTemporaryDir dir;
        Builder b(800);
        b.api("cudaLaunchKernel", 0, 1);
        b.kernel("before", 5, 1, 1);
        b.nvtx(NvtxOp::Push, 1000, "measure");
        b.api("cudaLaunchKernel", 1100, 2);
        b.nvtx(NvtxOp::Pop, 1200);
        b.kernel("inside", 1300, 10, 2);  // runs after the range closed, launched inside it: kept
        b.api("cudaLaunchKernel", 3000000000ull, 3);
        b.kernel("late", 3000000100ull, 10, 3);
        b.end();
        b.save(dir.path(), "800-1.wsink");
        ConvertOptions o;
        o.nvtxRange = "measure";
        auto res = toRuns(readSinkDir(dir.path().toStdString()), o);
        QCOMPARE(res.runs.size(), std::size_t(1));
        QCOMPARE(res.runs[0].kernels.size(), std::size_t(1));
        QCOMPARE(res.runs[0].kernels[0].launch.name, std::string("inside"));
        QCOMPARE(res.runs[0].apiSpans.size(), std::size_t(1));
        ConvertOptions d;
        d.durationSeconds = 1;  // the first second of the process: not "late" (3 s in)
        res = toRuns(readSinkDir(dir.path().toStdString()), d);
        QCOMPARE(res.runs[0].kernels.size(), std::size_t(2));
        ConvertOptions none;
        none.nvtxRange = "no-such-range";
        res = toRuns(readSinkDir(dir.path().toStdString()), none);
        QCOMPARE(res.runs.size(), std::size_t(0));
    }

    void nvtxOnlyProcessMakesNoRun()
    {
        QTemporaryDir dir;
        Builder b(900);
        b.nvtx(NvtxOp::Mark, 1, "m");
        b.end();
        b.save(dir.path(), "900-1.wsink");
        const auto res = toRuns(readSinkDir(dir.path().toStdString()), {});
        QCOMPARE(res.runs.size(), std::size_t(0));
        QCOMPARE(res.processesWithoutCuda, 1);
    }

    void stallRecordsRoundTrip()
    {
        QTemporaryDir dir;
        Builder b(42);
        b.stallSample("_Z4spinPfi", 2, 0x1a0, "smsp__pcsamp_warps_issue_stalled_long_scoreboard", 123, 1, 0xfeedull, "_Z6helperv");
        b.stallLaunch("_Z4spinPfi", 2, 1, 500);
        std::string cubin("\x7f" "ELF", 4);
        cubin += std::string(1000, '\0');
        cubin += "tail";
        appendStallCubin(b.out, 0xfeedull, cubin);
        appendStallNote(b.out, 35, "PC sampling not permitted");
        b.stallCount("_Z4spinPfi", 5, 1, 1);
        b.end();
        const SinkProcess s = readSink(b.save(dir.path(), "s.wsink"));
        QVERIFY2(s.error.empty(), s.error.c_str());
        QVERIFY(!s.truncated);
        QCOMPARE(int(s.stallSamples.size()), 1);
        const auto& x = s.stallSamples[0];
        QCOMPARE(x.pcOffset, std::uint64_t(0x1a0));
        QCOMPARE(x.cubinCrc, std::uint64_t(0xfeed));
        QCOMPARE(x.count, std::uint64_t(123));
        QCOMPARE(x.launchIndex, 2u);
        QCOMPARE(x.deviceId, 1u);
        QCOMPARE(s.str(x.nameId), std::string("_Z4spinPfi"));
        QCOMPARE(s.str(x.functionId), std::string("_Z6helperv"));
        QCOMPARE(s.str(x.reasonId), std::string("smsp__pcsamp_warps_issue_stalled_long_scoreboard"));
        QCOMPARE(int(s.stallLaunches.size()), 1);
        QCOMPARE(s.stallLaunches[0].totalSamples, std::uint64_t(500));
        QCOMPARE(s.stallLaunches[0].launchIndex, 2u);
        QCOMPARE(int(s.cubins.size()), 1);
        QCOMPARE(s.cubins.at(0xfeed), cubin);  // bytes intact, NULs included
        QCOMPARE(int(s.stallNotes.size()), 1);
        QCOMPARE(s.stallNotes[0].first, 35);
        QCOMPARE(s.stallNotes[0].second, std::string("PC sampling not permitted"));
        QCOMPARE(int(s.stallCounts.size()), 1);
        QCOMPARE(s.stallCounts[0].launches, 5u);
        QCOMPARE(s.stallCounts[0].sampled, 1u);
        QCOMPARE(s.stallCounts[0].deviceId, 1u);
        QVERIFY(s.ended);
        // A stall record cut in half: what came before is kept, the sink is truncated.
        std::string cut = b.out.substr(0, b.out.size() - sizeof(EndRec) - sizeof(RecHeader) - 3);
        std::ofstream(dir.filePath("c.wsink").toStdString(), std::ios::binary) << cut;
        const SinkProcess c = readSink(dir.filePath("c.wsink").toStdString());
        QVERIFY(c.truncated);
        QCOMPARE(int(c.stallSamples.size()), 1);
        QVERIFY(c.stallCounts.empty());
    }
    void demangling()
    {
        QCOMPARE(demangle("_Z6kernelPfi"), std::string("kernel(float*, int)"));
        QCOMPARE(demangle("triton_poi_fused_add_0"), std::string("triton_poi_fused_add_0"));
        QCOMPARE(demangle("_Znot a name"), std::string("_Znot a name"));
    }
};

QTEST_GUILESS_MAIN(TstSink)
#include "tst_sink.moc"
