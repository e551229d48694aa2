// warpstage-record --rungs lce:... without a GPU: the rung list, the lce shape, what each rung's program
// recording is asked for (driver arguments, --kernels, --launch-range, --trace-events, the run's label and
// tag), --list-rungs, the kernel names against the lce sources, rungs that cannot take the shape skipped, and the
// error paths (unknown rung, refused shape, driver missing, no GPU: exit codes, the existing file untouched).
#include "warpstage/lce_record.h"
#include "warpstage/rung_plan.h"
#include "warpstage/runfamily.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"


#include <QCryptographicHash>
#include <QDir>
#include <QMap>
#include <QRegularExpression>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "common/gpu_skip.h"
#include "common/record_run.h"

#include <map>
#include <regex>

namespace {
using Run = ws::testing::RecordRun;

Run runRecord(const QStringList& args)
{
    return ws::testing::runRecordExe(QStringLiteral(WARPSTAGE_RECORD_EXE), args);
}

bool haveGpu()
{
    return ws::testing::gpuProblem().empty();
}

bool gemmRung(const std::string& r)
{
    return r == "sync" || r == "pingpong";
}

QByteArray sha(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}
}  // namespace

class TestLceRecord : public QObject {
    Q_OBJECT
private slots:
    void rungList()
    {
        ws::rec::RungSelection s;
        QCOMPARE(QString::fromStdString(ws::rec::parseRungList("lce:all", &s, gemmRung)), QString());
        QCOMPARE(s.lce, (std::vector<int>{0, 1, 2, 3, 4}));
        QVERIFY(s.gemm.empty());
        QVERIFY(!s.gemmAll);
        QCOMPARE(QString::fromStdString(ws::rec::parseRungList("lce:3,lce:0,lce:3", &s, gemmRung)), QString());
        QCOMPARE(s.lce, (std::vector<int>{0, 3}));
        QCOMPARE(QString::fromStdString(ws::rec::parseRungList("sync,lce:padded,lce:fused_epilogue", &s, gemmRung)), QString());
        QCOMPARE(s.gemm, (std::vector<std::string>{"sync"}));
        QCOMPARE(s.lce, (std::vector<int>{2, 3}));
        QCOMPARE(QString::fromStdString(ws::rec::parseRungList("all", &s, gemmRung)), QString());
        QVERIFY(s.gemmAll);
        QVERIFY(s.lce.empty());
        QCOMPARE(QString::fromStdString(ws::rec::parseRungList("all,lce:all", &s, gemmRung)), QString());  // both families
        QVERIFY(s.gemmAll);
        QCOMPARE(s.lce, (std::vector<int>{0, 1, 2, 3, 4}));
        for (const char* bad : {"lce:5", "lce:", "lce:x", "lce:-1", "nope", ",", ""}) {
            const QString err = QString::fromStdString(ws::rec::parseRungList(bad, &s, gemmRung));
            QVERIFY2(!err.isEmpty(), bad);
        }
        QVERIFY(QString::fromStdString(ws::rec::parseRungList("lce:7", &s, gemmRung)).contains(QLatin1String("lce:0 .. lce:4")));
    }

    void shape()
    {
        ws::lce::Shape s;
        QCOMPARE(QString::fromStdString(ws::rec::parseLceShape("64x256x100x90x32x8", &s)), QString());
        QCOMPARE(s.m, 64);
        QCOMPARE(s.n, 256);
        QCOMPARE(s.kUser, 100);
        QCOMPARE(s.kCand, 90);
        QCOMPARE(s.b, 32);
        QCOMPARE(s.perUser, 8);
        for (const char* bad : {"64x256x100x90x32", "64x256x100x90x32x8x1", "0x256x100x90x32x8", "64x256x100x90x32x", "ax1x1x1x1x1", "+1x1x1x1x1x1"})
            QVERIFY2(!ws::rec::parseLceShape(bad, &s).empty(), bad);
    }

    // What each rung's program recording is asked for, and the label the viewer groups by.
    void programOptions()
    {
        ws::rec::LceOptions o;
        o.output = "/tmp/x.wstrace";
        QVERIFY(ws::rec::parseLceShape("200x256x300x200x64x8", &o.shape).empty());
        for (int rung = 0; rung < 5; ++rung) {
            const ws::rec::ProgramOptions po = ws::rec::lceProgramOptions(rung, o, "/opt/lce");
            QCOMPARE(po.program.front(), std::string("/opt/lce"));
            QStringList args;
            for (const auto& a : po.program)
                args << QString::fromStdString(a);
            QVERIFY(args.join(' ').contains(QStringLiteral("--rung %1 --m 200 --n 256 --k-user 300 --k-cand 200 --b 64 --per-user 8").arg(rung)));
            QVERIFY(args.join(' ').endsWith(QLatin1String("--time --warmup 2 --iters 5")));
            QCOMPARE(po.output, o.output);
            QCOMPARE(QString::fromStdString(po.runVariant), QString::fromStdString(ws::rec::lceVariant(rung)));
            const auto tag = ws::parseRungTag(po.runNotes);
            QVERIFY(tag);
            QCOMPARE(tag->family, std::string("lce"));
            QCOMPARE(tag->rung, rung);
            QCOMPARE(tag->usefulFlops, o.shape.flops());
            QVERIFY(std::abs(tag->bytesMoved - ws::lce::bytesMoved(rung, o.shape)) <= 1e-5 * tag->bytesMoved);
            QCOMPARE(tag->warmup, 2);
            QCOMPARE(tag->iterations, 5);
            if (rung >= 3) {  // one traced launch of our kernel, big enough for a whole launch
                const std::regex re(po.kernelsRegex);
                QVERIFY(std::regex_search(rung == 3 ? "lceEpilogueWarp" : "lceUserFirst", re));
                QVERIFY(!std::regex_search("sm90_xmma_gemm_f16f16_f16f32", re));
                QCOMPARE(po.launchFirst, 0LL);
                QCOMPARE(po.launchLast, 0LL);
                QCOMPARE(po.traceEvents, 8192LL);
            } else {  // cuBLAS rungs: no filter, nothing traced
                QVERIFY(po.kernelsRegex.empty());
                QCOMPARE(po.launchFirst, -1LL);
            }
        }
        QCOMPARE(QString::fromStdString(ws::rec::lceVariant(0)), QStringLiteral("lce_original"));
        QCOMPARE(QString::fromStdString(ws::rec::lceVariant(3)), QStringLiteral("lce_fused_epilogue"));
    }

    void listRungs()
    {
        const Run r = runRecord({QStringLiteral("--list-rungs")});
        QCOMPARE(r.code, 0);
        // Both families, each line starting with what --rungs takes, and how to select each family.
        QVERIFY2(r.out.contains(QLatin1String("\n  pingpong ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QLatin1String("\n  sync ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QLatin1String("--rungs lce:all")) && r.out.contains(QLatin1String("--lce-shape")), qPrintable(r.out));
        for (const char* l : {"\n  lce:0             original: ", "\n  lce:2             padded: ", "\n  lce:4             persistent: "})
            QVERIFY2(r.out.contains(QLatin1String(l)), qPrintable(r.out));
        // The rungs with a per-warp timeline name their real kernels.
        QVERIFY2(r.out.contains(QLatin1String("[program view + per-warp timeline of lceEpilogueWarp]")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QLatin1String("[program view + per-warp timeline of lceUserFirst]")), qPrintable(r.out));
        QCOMPARE(int(r.out.count(QLatin1String("[program view only]"))), 3);
    }

    // The --kernels filter of rungs 3-4 against the kernels the lce sources really define: the __global__ functions
    // of kernels/lce/*.cu(h) read from the files, so a renamed or removed kernel (session 6 removed lceFusedEpilogue
    // and lcePersistent) turns this red until lceKernelNames() follows.
    void kernelNamesMatchTheSources()
    {
        const QDir lceDir(QStringLiteral(WARPSTAGE_TEST_SOURCE_ROOT "/kernels/lce"));
        const QRegularExpression global(QStringLiteral("__global__\\s+void\\s+(?:__\\w+__\\s*\\([^)]*\\)\\s*)*(\\w+)\\s*\\("));
        QMap<QString, QStringList> byFile;  // file -> its kernels
        QStringList all;
        for (const QString& f : lceDir.entryList({QStringLiteral("*.cu"), QStringLiteral("*.cuh")}, QDir::Files)) {
            QFile file(lceDir.filePath(f));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QString text = QString::fromUtf8(file.readAll());
            for (auto it = global.globalMatch(text); it.hasNext();)
                byFile[f] << it.next().captured(1);
            QCOMPARE(int(byFile.value(f).size()), int(text.count(QLatin1String("__global__"))));  // none missed by the pattern
            all << byFile.value(f);
        }
        QVERIFY2(all.size() >= 8, qPrintable(all.join(',')));
        // Rung 3 is epilogue_warp.cu, rung 4 user_first.cu (docs/architecture.md): the rung's kernel is the file's
        // first, and every other kernel of the file extends its name (a diagnostic variant). Since s9-lcet both
        // rungs' kernels are templates on lce_body.cuh's configuration (lceEpilogueWarp<3, 0>, lceUserFirst<4, 10>
        // and <4, 15>: lce_shape.h's kRung*Config); the main-loop probe (transposed_probe.cu, LCE_RUNG4_EPILOGUE=tnone)
        // is no rung's kernel and must not match either filter.
        const std::map<int, QString> fileOf{{3, QStringLiteral("epilogue_warp.cu")}, {4, QStringLiteral("user_first.cu")}};
        QVERIFY2(byFile.value(QStringLiteral("transposed_probe.cu")).size() == 1, qPrintable(all.join(',')));
        for (const auto& [rung, file] : fileOf) {
            QStringList names;
            for (const auto& n : ws::rec::lceKernelNames(rung))
                names << QString::fromStdString(n);
            QVERIFY2(!byFile.value(file).isEmpty(), qPrintable(file));
            QCOMPARE(names, QStringList{byFile.value(file).value(0)});
            const QString base = names.value(0);
            for (const QString& k : byFile.value(file))
                QVERIFY2(k.startsWith(base), qPrintable(k));
            const std::regex re(ws::rec::lceKernelsRegex(rung));
            for (const QString& k : all) {
                const bool own = byFile.value(file).contains(k) && k.startsWith(base);
                // CUPTI reports the mangled name of the template instance: the filter must find the name inside it.
                const std::string mangled = "_ZN2ws3lce4body" + std::to_string(k.size()) + k.toStdString() + "ILi3ELi0EEEv14CUtensorMap_st";
                QVERIFY2(std::regex_search(k.toStdString(), re) == own, qPrintable(QStringLiteral("rung %1, kernel %2").arg(rung).arg(k)));
                QVERIFY2(std::regex_search(mangled, re) == own, qPrintable(QString::fromStdString(mangled)));
            }
        }
        for (int rung = 0; rung < 3; ++rung) {
            QVERIFY(ws::rec::lceKernelNames(rung).empty());
            QVERIFY(ws::rec::lceKernelsRegex(rung).empty());
        }
        // The set-up kernels the run's tag names (left out of the iterations) are the driver's own (problem.cu: allocate(), shared with liblce_capi).
        ws::rec::LceOptions o;
        const auto tag = ws::parseRungTag(ws::rec::lceProgramOptions(0, o, "/opt/lce").runNotes);
        QVERIFY(tag);
        QVERIFY(!tag->setupKernels.empty());
        for (const auto& k : tag->setupKernels)
            QVERIFY2(byFile.value(QStringLiteral("problem.cu")).contains(QString::fromStdString(k)), k.c_str());
    }

    // Rungs that cannot take the shape are skipped with their sentence, the others recorded (no GPU needed).
    void rungsThatRefuseTheShapeAreSkipped()
    {
        ws::lce::Shape s;
        QVERIFY(ws::rec::parseLceShape("64x100x8x8x8x2", &s).empty());  // N = 100: rungs 3-4 cannot (TMA rows)
        ws::rec::LceRungPlan p = ws::rec::planLceRungs({0, 1, 2, 3, 4}, s);
        QCOMPARE(p.record, (std::vector<int>{0, 1, 2}));
        QCOMPARE(int(p.skipped.size()), 2);
        QCOMPARE(QString::fromStdString(p.skipped[0].rung), QStringLiteral("lce:3"));
        QCOMPARE(QString::fromStdString(p.skipped[1].rung), QStringLiteral("lce:4"));
        QVERIFY2(QString::fromStdString(p.skipped[1].why).contains(QLatin1String("N (100) must be a multiple of 8")), p.skipped[1].why.c_str());
        QVERIFY(QString::fromStdString(ws::rec::skippedText(p.skipped[0])).startsWith(QLatin1String("lce:3 skipped: ")));
        p = ws::rec::planLceRungs({0, 1, 2, 3, 4}, ws::lce::Shape{});  // the benchmark point: all of them
        QCOMPARE(p.record, (std::vector<int>{0, 1, 2, 3, 4}));
        QVERIFY(p.skipped.empty());
        p = ws::rec::planLceRungs({3, 4}, s);
        QVERIFY(p.record.empty());
        QVERIFY(QString::fromStdString(ws::rec::noRungTakesText(p.skipped, s.text())).contains(QLatin1String("no selected rung can take the shape")));
    }

    void errors()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("t.wstrace"));
        Run r = runRecord({QStringLiteral("--rungs"), QStringLiteral("lce:9"), QStringLiteral("-o"), out});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains(QLatin1String("unknown lce rung '9'")));
        r = runRecord({QStringLiteral("--lce-shape"), QStringLiteral("1x1x1x1x1x1"), QStringLiteral("-o"), out});
        QCOMPARE(r.code, 2);  // an lce option without lce rungs
        r = runRecord({QStringLiteral("--rungs"), QStringLiteral("lce:3,lce:4"), QStringLiteral("--lce-shape"), QStringLiteral("64x100x8x8x8x2"),
                       QStringLiteral("-o"), out});
        QCOMPARE(r.code, 2);  // N = 100: rungs 3-4 refuse (TMA rows of 16 bytes), and no other rung is selected
        QVERIFY2(r.err.contains(QLatin1String("N (100) must be a multiple of 8")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("no selected rung can take the shape")), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        if (!haveGpu()) {
            // lce:all on that shape: rungs 3-4 skipped with the sentence, rungs 0-2 go on (here to the GPU check: 3).
            r = runRecord({QStringLiteral("--rungs"), QStringLiteral("lce:all"), QStringLiteral("--lce-shape"), QStringLiteral("64x100x8x8x8x2"),
                           QStringLiteral("--lce-program"), QStringLiteral("/bin/true"), QStringLiteral("-o"), out});
            QVERIFY2(r.code == 3 || r.code == 4, qPrintable(QString::number(r.code) + r.err));
            QVERIFY2(r.err.contains(QLatin1String("warning: lce:3 skipped: it cannot take this shape (rung 3 loads E_cand with TMA")), qPrintable(r.err));
            QVERIFY2(r.err.contains(QLatin1String("warning: lce:4 skipped")), qPrintable(r.err));
            QVERIFY(!QFile::exists(out));
            // GEMM rungs that all refuse --shape do not stop the lce rungs of the same list.
            r = runRecord({QStringLiteral("--rungs"), QStringLiteral("sync,lce:0"), QStringLiteral("--shape"), QStringLiteral("1000x1000x1004"),
                           QStringLiteral("--lce-program"), QStringLiteral("/bin/true"), QStringLiteral("-o"), out});
            QVERIFY2(r.code == 3 || r.code == 4, qPrintable(QString::number(r.code) + r.err));
            QVERIFY2(r.err.contains(QLatin1String("sync needs K a multiple of 8")), qPrintable(r.err));
            QVERIFY2(r.err.contains(QLatin1String("(lce needs an sm_90 GPU)")), qPrintable(r.err));
            QVERIFY(!QFile::exists(out));
        }
        r = runRecord({QStringLiteral("--rungs"), QStringLiteral("lce:0"), QStringLiteral("--lce-program"), dir.filePath(QStringLiteral("nope")),
                       QStringLiteral("-o"), out});
        QCOMPARE(r.code, 9);
        QVERIFY(r.err.contains(QLatin1String("is not an executable file")));
        QVERIFY(!QFile::exists(out));

        // An existing file and no GPU: exit 3, the file untouched (on a GPU machine the driver would run).
        {
            ws::TraceStore st = ws::TraceStore::openForWriting(out.toStdString());
            ws::SyntheticProgramParams sp;
            sp.steps = 1;
            sp.launchesPerStep = 20;
            ws::writeSyntheticProgram(st, sp);
        }
        const QByteArray before = sha(out);
        if (!haveGpu()) {
            r = runRecord({QStringLiteral("--rungs"), QStringLiteral("lce:all"), QStringLiteral("--lce-program"), QStringLiteral("/bin/true"),
                           QStringLiteral("-o"), out});
            QVERIFY2(r.code == 3 || r.code == 4, qPrintable(r.err));
            QVERIFY(r.err.contains(QLatin1String("nothing run")));
            QCOMPARE(sha(out), before);
        }
        // Not a Warpstage file: exit 5 before anything runs.
        const QString junk = dir.filePath(QStringLiteral("junk.wstrace"));
        QFile j(junk);
        QVERIFY(j.open(QIODevice::WriteOnly));
        j.write("not a trace");
        j.close();
        r = runRecord({QStringLiteral("--rungs"), QStringLiteral("lce:0"), QStringLiteral("--lce-program"), QStringLiteral("/bin/true"),
                       QStringLiteral("-o"), junk});
        QCOMPARE(r.code, 5);
        // A folder that does not exist: exit 5 with the reason, for the lce family and for a plain program
        // recording alike (both use the recorder's one output check, path_util.h's outputProblem).
        const QString nowhere = dir.filePath(QStringLiteral("missing/t.wstrace"));
        for (const QStringList& args : {QStringList{QStringLiteral("--rungs"), QStringLiteral("lce:0"), QStringLiteral("--lce-program"),
                                                    QStringLiteral("/bin/true"), QStringLiteral("-o"), nowhere},
                                        QStringList{QStringLiteral("-o"), nowhere, QStringLiteral("--"), QStringLiteral("/bin/true")}}) {
            r = runRecord(args);
            QCOMPARE(r.code, 5);
            QVERIFY2(r.err.contains(QLatin1String("cannot create the file (folder '")) && r.err.contains(QLatin1String("is not writable or missing")),
                     qPrintable(r.err));
            QVERIFY(!QFile::exists(nowhere));
        }
    }
};

QTEST_GUILESS_MAIN(TestLceRecord)
#include "tst_lce_record.moc"
