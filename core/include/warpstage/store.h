// Warpstage SQLite store: the file users keep (docs/schema.md).
//
// Qt-free. Every failure is reported as ws::StoreError naming the file and the
// problem ("trace.db: not a Warpstage trace (table 'runs' missing)"); a bad or
// hostile file never crashes the reader.
//
//  * TraceStore::openReadOnly(path): for viewing. Opens the file read-only and
//    never changes it. An older schema throws NeedsMigrationError (the caller
//    asks the user, then calls migrateCopy() or migrateInPlace()); a newer
//    schema throws StoreError.
//  * TraceStore::openForWriting(path): creates the file, or opens an existing
//    one of the current version to append runs. WAL journal (on an existing
//    file from beginRun() or the first commit on: a refused write leaves it
//    byte-identical, docs/schema.md). An older file throws
//    NeedsMigrationError, it is never rewritten silently.
//  * writeRun(): one run in ONE transaction; a run is fully in the file or not
//    at all. beginRun() gives a streaming RunWriter for the recorder (same
//    guarantee: nothing is visible before commit(), a crash or a destroyed
//    writer without commit() leaves no partial run and earlier runs intact).
//  * A TraceStore is one SQLite connection: not thread-safe. Use one per thread
//    or guard it with a mutex (several read-only stores on one file are fine).
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace ws {

// Schema version written to PRAGMA user_version. History (docs/schema.md):
//   1: intervals as one row each (table 'intervals'); never shipped in a release
//   2: intervals packed per warp in 'interval_chunks'
//   3: programs: run kind/process/exit columns, streams, nvtx_ranges, api_spans, launch context/graph
//      columns; interval chunks compressed (zstd over the delta-encoded columns)
//   4: loads packed per CTA ('load_chunks'), per-CTA / per-warpgroup metrics packed per launch
//      ('metric_chunks'), user phase names ('phase_names'), recorded source text ('sources',
//      'source_texts')
//   5: API call names, NVTX names and domains interned ('names'; rows in 'api_calls', 'nvtx_events');
//      'api_spans' and 'nvtx_ranges' are views with the schema-4 columns
//   6: outer scopes of a warp ('scope_spans'), drawn as bracket lanes (current)
inline constexpr int kSchemaVersion = 6;
inline constexpr int kOldestMigratableVersion = 1;
// PRAGMA application_id of a Warpstage file ("WSTG").
inline constexpr std::int32_t kApplicationId = 0x57535447;

class StoreError : public std::runtime_error {
public:
    StoreError(std::string path, std::string problem);
    const std::string& path() const noexcept { return m_path; }
    const std::string& problem() const noexcept { return m_problem; }

private:
    std::string m_path;
    std::string m_problem;
};

// The file is a Warpstage trace of an older schema: it can be migrated.
class NeedsMigrationError : public StoreError {
public:
    NeedsMigrationError(std::string path, int fileVersion);
    int fileVersion() const noexcept { return m_fileVersion; }

private:
    int m_fileVersion;
};

// What a file is, without changing it (no migration, no write).
struct FileCheck {
    int fileVersion = 0;               // PRAGMA user_version of the file
    int currentVersion = kSchemaVersion;
    bool needsMigration = false;       // kOldestMigratableVersion <= fileVersion < kSchemaVersion
};

struct MigrationResult {
    std::string source;
    std::string destination;           // == source for migrateInPlace
    int fromVersion = 0;
    int toVersion = kSchemaVersion;
    std::int64_t intervalsMigrated = 0;
};

// Small per-run and per-kernel summaries (cheap: no interval decoding).
struct KernelSummary {
    KernelLaunch launch;
    std::int64_t ctaCount = 0;
    std::int64_t warpCount = 0;
    std::int64_t intervalCount = 0;    // sum of interval_chunks.count
    std::int64_t loadCount = 0;
    std::int64_t stallSampleCount = 0; // sum of stall_samples.count
};

struct RunSummary {
    RunInfo info;
    std::int64_t kernelCount = 0;
    std::int64_t intervalCount = 0;
    TimeNs start = 0;                  // min kernel start (0 if no kernel)
    TimeNs end = 0;                    // max kernel end
};

class TraceStore;

// Streaming writer for one run (TraceStore::beginRun). The TraceStore must
// outlive the writer and must not be moved while it is open. Holds the store's write
// transaction until commit(); destroying it without commit() rolls back.
class RunWriter {
public:
    RunWriter(RunWriter&&) noexcept;
    RunWriter& operator=(RunWriter&&) = delete;
    RunWriter(const RunWriter&) = delete;
    ~RunWriter();

    RowId runId() const noexcept { return m_runId; }
    // Adds one kernel launch with everything it holds; returns its kernel id.
    RowId addKernel(const KernelRecord& kernel);
    void addMemOps(const std::vector<MemOp>& ops);
    // Metric::kernelId here is a kernel id returned by addKernel (0 = run-wide).
    void addMetrics(const std::vector<Metric>& metrics);
    // Program-level records (schema 3); may be called many times, in any order, before commit().
    // Launches without per-warp data (thousands per run): the fast path; ids are not returned.
    void addLaunches(const std::vector<KernelLaunch>& launches);
    void addStreams(const std::vector<StreamInfo>& streams);
    void addNvtxRanges(const std::vector<NvtxRange>& ranges);
    void addApiSpans(const std::vector<ApiSpan>& spans);
    // Source files of the run (schema 4); a path given again replaces the earlier text.
    void addSources(const std::vector<SourceFile>& sources);
    // How the recorded process ended and the span of its records; written at commit().
    void setProcessEnd(TimeNs processStart, TimeNs processEnd, int exitCode, int exitSignal);
    // Marks the run incomplete (committed with status Incomplete: what was recorded is kept).
    void setIncomplete(const std::string& reason);
    // Marks the run failed (it is still committed, with status Failed).
    void setFailed(const std::string& reason);
    void setNotes(const std::string& notes);
    void setHasStalls(bool hasStalls);
    void commit();
    void rollback();

private:
    friend class TraceStore;
    RunWriter(TraceStore* store, RowId runId);
    TraceStore* m_store = nullptr;
    RowId m_runId = 0;
    bool m_open = false;
};

struct LoadOptions {
    bool intervals = true;             // decode the per-warp intervals
    bool loads = true;
    bool tiles = true;
    bool stalls = true;
    bool sources = true;               // the run's recorded source texts (KernelTrace::sources)
};

class TraceStore {
public:
    TraceStore(TraceStore&&) noexcept;
    TraceStore& operator=(TraceStore&&) noexcept;
    TraceStore(const TraceStore&) = delete;
    TraceStore& operator=(const TraceStore&) = delete;
    ~TraceStore();

    // Read-only, never changes the file. Throws StoreError / NeedsMigrationError.
    static TraceStore openReadOnly(const std::string& path);
    // Creates or appends. Throws StoreError / NeedsMigrationError.
    static TraceStore openForWriting(const std::string& path);
    // Inspects a file's schema version without changing it. Throws StoreError
    // for not-SQLite / not-Warpstage / newer-than-supported files.
    static FileCheck checkFile(const std::string& path);
    // Copies src to dst (dst must not exist) and migrates the copy to the
    // current version. src is opened read-only and never changed.
    static MigrationResult migrateCopy(const std::string& src, const std::string& dst);
    // Migrates the file itself. Only call this after the user explicitly agreed.
    static MigrationResult migrateInPlace(const std::string& path);

    const std::string& path() const noexcept { return m_path; }
    bool isReadOnly() const noexcept { return m_readOnly; }
    int schemaVersion() const noexcept { return m_version; }

    // Reading
    std::vector<RunInfo> runs() const;
    std::vector<RunSummary> runSummaries() const;
    RunInfo run(RowId runId) const;
    std::vector<KernelLaunch> kernels(RowId runId) const;
    std::vector<KernelSummary> kernelSummaries(RowId runId) const;
    KernelLaunch kernel(RowId kernelId) const;
    std::vector<MemOp> memOps(RowId runId) const;
    std::vector<Metric> metrics(RowId runId) const;
    // Stall samples stored for this kernel launch itself.
    std::vector<StallSample> stallSamples(RowId kernelId) const;
    // Stall samples that belong with this launch: its own, plus those of the
    // run's untraced launches of the same rung (variant).
    std::vector<StallSample> stallSamplesForRung(RowId kernelId) const;
    // Schema 3 program-level records of a run, each sorted by start.
    std::vector<StreamInfo> streams(RowId runId) const;
    std::vector<NvtxRange> nvtxRanges(RowId runId) const;
    std::vector<ApiSpan> apiSpans(RowId runId) const;
    // Everything of a run at program level (model.h ProgramTrace): launches, copies, streams, NVTX, API.
    ProgramTrace loadProgram(RowId runId) const;
    // Columnar, validated form of one launch (see KernelTrace in model.h):
    // lanes ordered (SM, CTA start, CTA, warp index), each sorted by start.
    KernelTrace loadKernel(RowId kernelId, const LoadOptions& options = {}) const;
    // Schema 4: the source files recorded with a run (sorted by path), each checked against its sha256.
    std::vector<SourceFile> loadSources(RowId runId) const;
    // One of them by its path as recorded; nullopt if the run has no such file.
    std::optional<SourceFile> loadSource(RowId runId, const std::string& path) const;

    // Writing (store opened with openForWriting)
    RowId writeRun(const RunRecord& run);
    RunWriter beginRun(const RunInfo& info);
    // Replaces metrics with the same (run, kernel, scope, name); one transaction.
    void writeMetrics(RowId runId, const std::vector<Metric>& metrics);
    // Adds source files to an existing run (same rules as RunWriter::addSources); one transaction.
    void writeSources(RowId runId, const std::vector<SourceFile>& sources);
    // Replaces the derived role/stage of stall samples: `byKernel` maps kernels of the run to their
    // samples as stallSamples() returns them (same order, count, PCs and lines; only role and stage are
    // written), and `note` is appended to the run's notes. One transaction; a mismatch changes nothing.
    void updateStallStages(RowId runId, const std::map<RowId, std::vector<StallSample>>& byKernel,
                           const std::string& note);

private:
    friend class RunWriter;
    TraceStore() = default;
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    std::string m_path;
    bool m_readOnly = true;
    int m_version = 0;
};

}  // namespace ws
