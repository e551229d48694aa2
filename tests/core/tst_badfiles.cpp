// Every kind of bad file gets a StoreError that names the file and the problem; never a crash.
// Also replays the fuzzer's corpus and crash regressions (tests/fuzz/corpus, tests/fuzz/regressions).
#include "testutil.h"
#include "warpstage/report.h"
#include "warpstage/store.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace ws;

namespace {

// Opens, lists and loads everything, the way the viewer does.
void readEverything(const std::string& path)
{
    auto st = TraceStore::openReadOnly(path);
    for (const RunSummary& r : st.runSummaries()) {
        st.memOps(r.info.id);
        st.metrics(r.info.id);
        st.loadSources(r.info.id);
        for (const KernelSummary& k : st.kernelSummaries(r.info.id))
            st.loadKernel(k.launch.id);
        st.loadProgram(r.info.id);  // launches, copies, streams, NVTX ranges, API calls (schema 5: interned names)
    }
}

void writeBytes(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

class TestBadFiles : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_good;
    std::string m_raw;  // the same run with raw (uncompressed) chunks
    int m_n = 0;

    std::string fresh(const char* tag)
    {
        return (m_dir.path() + "/" + QString::number(++m_n) + "_" + tag + ".wstrace").toStdString();
    }
    std::string copyOfGood(const char* tag)
    {
        const auto p = fresh(tag);
        std::filesystem::copy_file(m_good, p);
        return p;
    }
    std::string copyOfRaw(const char* tag)
    {
        const auto p = fresh(tag);
        std::filesystem::copy_file(m_raw, p);
        return p;
    }
    void expectError(const std::string& path, const char* needle)
    {
        try {
            readEverything(path);
            QFAIL(qPrintable(QString("no error for %1 (expected '%2')").arg(QString::fromStdString(path), needle)));
        } catch (const NeedsMigrationError&) {
            QFAIL("unexpected NeedsMigrationError");
        } catch (const StoreError& e) {
            const std::string what = e.what();
            QCOMPARE(e.path(), path);
            QVERIFY2(what.rfind(path + ": ", 0) == 0, what.c_str());  // "<file>: <problem>"
            QVERIFY2(e.problem().find(needle) != std::string::npos, what.c_str());
        }
        // The headless report (summaries only) either describes the file or says what is wrong; never crashes.
        for (bool json : {false, true}) {
            try {
                QVERIFY(!describeFile(path, json).empty());
            } catch (const StoreError& e) {
                QCOMPARE(e.path(), path);
            }
        }
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_good = (m_dir.path() + "/good.wstrace").toStdString();
        {
            auto st = TraceStore::openForWriting(m_good);
            st.writeRun(wstest::smallRun());
        }
        m_raw = (m_dir.path() + "/raw.wstrace").toStdString();
        qputenv("WARPSTAGE_CHUNK_CODEC", "raw");
        {
            auto st = TraceStore::openForWriting(m_raw);
            st.writeRun(wstest::smallRun());
        }
        qunsetenv("WARPSTAGE_CHUNK_CODEC");
        QCOMPARE(wstest::rawQueryInt(m_good, "SELECT MIN(codec) FROM interval_chunks"), 1);
        QCOMPARE(wstest::rawQueryInt(m_raw, "SELECT MAX(codec) FROM interval_chunks"), 0);
    }

    void goodFileReads()
    {
        readEverything(m_good);
        readEverything(m_raw);
    }

    void missingFile() { expectError(fresh("missing"), "no such file"); }
    void directory()
    {
        const auto p = fresh("dir");
        std::filesystem::create_directory(p);
        expectError(p, "directory");
    }
    void emptyFile()
    {
        const auto p = fresh("empty");
        writeBytes(p, "");
        expectError(p, "empty file");
    }
    void notSqlite()
    {
        const auto p = fresh("text");
        writeBytes(p, "this is a CSV file,1,2,3\nnot a trace\n");
        expectError(p, "not an SQLite database");
    }
    void sqliteMagicOnly()
    {
        const auto p = fresh("magic");
        writeBytes(p, std::string("SQLite format 3\0", 16) + "garbage");
        expectError(p, "truncated");
    }
    void truncated_data()
    {
        QTest::addColumn<double>("fraction");
        QTest::newRow("90%") << 0.9;
        QTest::newRow("50%") << 0.5;
        QTest::newRow("10%") << 0.1;
        QTest::newRow("header+1") << -1.0;
    }
    void truncated()
    {
        QFETCH(double, fraction);
        const auto p = copyOfGood("trunc");
        const auto size = std::filesystem::file_size(p);
        std::filesystem::resize_file(p, fraction < 0 ? 101 : static_cast<std::uintmax_t>(size * fraction));
        expectError(p, "truncated");
    }
    void emptyDatabase()
    {
        const auto p = fresh("emptydb");
        wstest::rawExec(p, "PRAGMA user_version = 0; CREATE TABLE t(x); DROP TABLE t; VACUUM;");
        expectError(p, "not a Warpstage trace (the database is empty, table 'runs' missing)");
    }
    void otherApplicationsDatabase()
    {
        const auto p = fresh("other");
        wstest::rawExec(p, "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers(name) VALUES('x');");
        expectError(p, "not a Warpstage trace (table 'runs' missing)");
    }
    void missingTable_data()
    {
        QTest::addColumn<QString>("table");
        for (const char* t : {"kernels", "ctas", "warps", "interval_chunks", "load_chunks", "tiles", "stall_samples", "metrics", "memops",
                              "metric_chunks", "phase_names", "sources", "source_texts"})
            QTest::newRow(t) << QString(t);
    }
    void missingTable()
    {
        QFETCH(QString, table);
        const auto p = copyOfGood("droptable");
        wstest::rawExec(p, "DROP TABLE " + table.toStdString());
        expectError(p, ("table '" + table.toStdString() + "' missing").c_str());
    }
    void missingColumn()
    {
        const auto p = copyOfGood("dropcol");
        wstest::rawExec(p, "ALTER TABLE ctas DROP COLUMN ns_per_cycle");
        expectError(p, "table 'ctas' lacks column 'ns_per_cycle'");
    }
    void newerVersion()
    {
        const auto p = copyOfGood("newer");
        wstest::rawExec(p, "PRAGMA user_version = 99");
        expectError(p, "newer Warpstage (schema version 99");
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::checkFile(p));
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::openForWriting(p));
        QVERIFY_THROWS_EXCEPTION(StoreError, TraceStore::migrateCopy(p, p + ".migrated"));
        QVERIFY(!std::filesystem::exists(p + ".migrated"));
    }

    // --- rows that are wrong ----------------------------------------------------------
    void negativeIntervalDuration()
    {
        // durations are zigzag varints; the small test run has 1-byte durations, so byte 0x01 = -1 ns.
        const auto p = copyOfRaw("negdur");
        wstest::rawExec(p, "UPDATE interval_chunks SET durations = X'01' || substr(durations, 2) "
                           "WHERE id = (SELECT MIN(id) FROM interval_chunks)");
        expectError(p, "negative duration (-1 ns)");
    }
    void negativeCtaDuration()
    {
        const auto p = copyOfGood("negcta");
        wstest::rawExec(p, "UPDATE ctas SET end_ns = start_ns - 5 WHERE id = (SELECT MIN(id) FROM ctas)");
        expectError(p, "ends before it starts (negative duration)");
    }
    void negativeKernelDuration()
    {
        const auto p = copyOfGood("negkernel");
        wstest::rawExec(p, "UPDATE kernels SET end_ns = start_ns - 5");
        expectError(p, "ends before it starts");
    }
    void negativeLoad()
    {
        // schema 4: a load's latency is stored unsigned; a damaged chunk is what can go wrong
        const auto p = copyOfGood("negload");
        wstest::rawExec(p, "UPDATE load_chunks SET data = X'28b52ffd0000' WHERE id = 1");
        expectError(p, "load chunk 1: ");
    }
    void negativeMemOp()
    {
        const auto p = copyOfGood("negmemop");
        wstest::rawExec(p, "UPDATE memops SET end_ns = start_ns - 1");
        expectError(p, "ends before it starts");
    }
    void intervalsPointAtMissingWarp()
    {
        const auto p = copyOfGood("orphan");
        wstest::rawExec(p, "UPDATE interval_chunks SET warp_id = 4242 WHERE id = (SELECT MAX(id) FROM interval_chunks)");
        expectError(p, "points at missing warp 4242");
    }
    void warpPointsAtMissingCta()
    {
        const auto p = copyOfGood("orphanwarp");
        wstest::rawExec(p, "UPDATE warps SET cta_id = 777 WHERE id = 2");
        expectError(p, "points at missing CTA 777");
    }
    void loadPointsAtMissingCta()
    {
        const auto p = copyOfGood("orphanload");
        wstest::rawExec(p, "UPDATE load_chunks SET cta_id = 555 WHERE id = 1");
        expectError(p, "points at missing CTA 555");
    }
    void tilePointsAtMissingWarp()
    {
        const auto p = copyOfGood("orphantile");
        wstest::rawExec(p, "UPDATE tiles SET warp_id = 999 WHERE id = 1");
        expectError(p, "points at missing warp 999");
    }
    void truncatedBlob_data()
    {
        QTest::addColumn<QString>("column");
        for (const char* c : {"starts", "durations", "kinds", "slots", "ksteps"})
            QTest::newRow(c) << QString(c);
    }
    void truncatedBlob()
    {
        QFETCH(QString, column);
        const auto p = copyOfRaw("blob");
        const auto c = column.toStdString();
        wstest::rawExec(p, "UPDATE interval_chunks SET " + c + " = substr(" + c + ", 1, length(" + c + ") - 1) WHERE id = 1");
        expectError(p, "truncated or bad blob");
    }
    void trailingBlobBytes()
    {
        const auto p = copyOfRaw("trailing");
        wstest::rawExec(p, "UPDATE interval_chunks SET slots = slots || X'00' WHERE id = 1");
        expectError(p, "trailing bytes");
    }
    void blobWithUnterminatedVarint()
    {
        const auto p = copyOfRaw("varint");
        wstest::rawExec(p, "UPDATE interval_chunks SET starts = X'FFFFFFFFFFFFFFFFFFFFFF' || substr(starts, 12) WHERE id = 1");
        expectError(p, "bad blob");
    }
    // Compressed chunks (codec 1): the zstd frame is checked before and after decompressing.
    void zstdFrameDamaged_data()
    {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("problem");
        QTest::newRow("truncated") << "UPDATE interval_chunks SET starts = substr(starts, 1, length(starts) - 3) WHERE id = 1"
                                   << "corrupt or truncated zstd frame";
        QTest::newRow("trailing") << "UPDATE interval_chunks SET starts = starts || X'00' WHERE id = 1"
                                  << "trailing bytes after the zstd frame";
        QTest::newRow("bad magic") << "UPDATE interval_chunks SET starts = X'00' || substr(starts, 2) WHERE id = 1"
                                   << "corrupt zstd frame (bad header)";
        QTest::newRow("payload corrupted") << "UPDATE interval_chunks SET starts = substr(starts, 1, length(starts) - 4) "
                                              "|| X'FFFFFFFF' WHERE id = 1"
                                           << "interval chunk 1 of warp 1: ";
        QTest::newRow("other blob set") << "UPDATE interval_chunks SET kinds = X'05' WHERE id = 1"
                                        << "a zstd chunk keeps everything in 'starts'";
        QTest::newRow("unknown codec") << "UPDATE interval_chunks SET codec = 7 WHERE id = 1" << "unknown codec 7";
        QTest::newRow("raw flag on zstd") << "UPDATE interval_chunks SET codec = 0 WHERE id = 1" << "interval chunk 1 of warp 1: ";
        QTest::newRow("count too small") << "UPDATE interval_chunks SET count = 0 WHERE id = 1"
                                         << "bytes, more than 0 intervals can take";
        QTest::newRow("count too large") << "UPDATE interval_chunks SET count = count + 1 WHERE id = 1"
                                         << "truncated or bad blob (kinds has";
        QTest::newRow("frame of another chunk") << "UPDATE interval_chunks SET starts = (SELECT starts FROM interval_chunks "
                                                   "WHERE id = 2) WHERE id = 1"
                                                << "interval chunk 1 of warp 1: ";
    }
    void zstdFrameDamaged()
    {
        QFETCH(QString, sql);
        QFETCH(QString, problem);
        const auto p = copyOfGood("zstd");
        wstest::rawExec(p, sql.toStdString());
        expectError(p, problem.toStdString().c_str());
    }
    void lyingCount_data()
    {
        QTest::addColumn<qint64>("count");
        QTest::newRow("negative") << qint64(-5);
        QTest::newRow("too many") << (qint64(1) << 40);
        QTest::newRow("huge") << (qint64(1) << 62);
    }
    void lyingCount()
    {
        QFETCH(qint64, count);
        const auto p = copyOfGood("count");
        wstest::rawExec(p, "UPDATE interval_chunks SET count = " + std::to_string(count) + " WHERE id = 1");
        expectError(p, "interval");
    }
    void blobOfWrongType()
    {
        const auto p = copyOfGood("texttype");
        wstest::rawExec(p, "UPDATE interval_chunks SET kinds = 'hello' WHERE id = 1");
        expectError(p, "interval chunk");
    }
    void chunksOutOfOrder()
    {
        const auto p = copyOfGood("order");
        // Second chunk of the same warp starting before the first one ends: make one chunk per warp 2 chunks
        // by duplicating a chunk with an earlier start.
        wstest::rawExec(p, "INSERT INTO interval_chunks(kernel_id, warp_id, chunk_index, first_start_ns, last_end_ns, count, "
                           "starts, durations, kinds, slots, ksteps, codec) SELECT kernel_id, warp_id, chunk_index + 1, "
                           "first_start_ns - 1000, last_end_ns, count, starts, durations, kinds, slots, ksteps, codec "
                           "FROM interval_chunks WHERE id = 1");
        expectError(p, "out of order");
    }
    void timestampOverflow()
    {
        const auto p = copyOfGood("overflow");
        wstest::rawExec(p, "UPDATE interval_chunks SET first_start_ns = 9223372036854775800 WHERE id = 1");
        expectError(p, "out of range");
    }
    void garbageInsideValidSqlite()
    {
        // Overwrite a page in the middle of the file with garbage (keeps the header).
        const auto p = copyOfGood("garbage");
        const auto size = std::filesystem::file_size(p);
        std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(size / 2));
        const std::string junk(4096, '\xA5');
        f.write(junk.data(), static_cast<std::streamsize>(std::min<std::uintmax_t>(junk.size(), size / 2 - 1)));
        f.close();
        try {
            readEverything(p);
            // Garbage may land in free space and be harmless; what matters is no crash.
        } catch (const StoreError& e) {
            QCOMPARE(e.path(), p);
        }
    }

    // --- the fuzzer's corpus and its regressions must never crash ----------------------
    void fuzzCorpusAndRegressions()
    {
        const QByteArray src = qgetenv("WARPSTAGE_SOURCE_DIR");
        if (src.isEmpty())
            QSKIP("WARPSTAGE_SOURCE_DIR not set");
        int files = 0;
        for (const char* sub : {"tests/fuzz/corpus", "tests/fuzz/regressions"}) {
            QDir d(QString::fromUtf8(src) + "/" + sub);
            for (const QFileInfo& fi : d.entryInfoList(QDir::Files)) {
                const auto copy = fresh("corpus");
                std::filesystem::copy_file(fi.absoluteFilePath().toStdString(), copy);
                try {
                    readEverything(copy);
                } catch (const StoreError& e) {
                    QCOMPARE(e.path(), copy);
                    QVERIFY(!e.problem().empty());
                }
                ++files;
            }
        }
        qInfo("replayed %d corpus/regression files", files);
        // schema 4's packed tables: the valid file reads, each damaged one is refused with its reason
        const std::string corpus = src.toStdString() + "/tests/fuzz/corpus/";
        readEverything(corpus + "valid_v4_packed.wstrace");
        QCOMPARE(TraceStore::openReadOnly(corpus + "valid_v4_packed.wstrace").loadSources(1).size(), std::size_t(1));
        readEverything(corpus + "valid_v5_program.wstrace");
        {
            const ProgramTrace p = TraceStore::openReadOnly(corpus + "valid_v5_program.wstrace").loadProgram(1);
            QCOMPARE(p.apiSpans.size(), std::size_t(6));
            QCOMPARE(p.apiSpans[1].name, std::string("cudaLaunchKernel"));
            QCOMPARE(p.nvtx[1].domain, std::string("torch"));
        }
        for (const auto& [name, needle] : std::vector<std::pair<const char*, const char*>>{
                 {"v4_damaged_load_chunk.wstrace", "load chunk"},
                 {"v4_damaged_metric_chunk.wstrace", "metric chunk"},
                 {"v4_damaged_source.wstrace", "source file"},
                 // schema 5: interned names, the runs' id ranges, the views
                 {"v5_missing_name.wstrace", "API call 3 points at missing name 4242"},
                 {"v5_bad_range.wstrace", "its NVTX range 2..99 does not match the rows"},
                 {"v5_missing_view.wstrace", "view 'nvtx_ranges' missing"}}) {
            const auto copy = fresh("v4");
            std::filesystem::copy_file(corpus + name, copy);
            expectError(copy, needle);
        }
    }
};

QTEST_GUILESS_MAIN(TestBadFiles)
#include "tst_badfiles.moc"
