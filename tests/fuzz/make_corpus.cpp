// Writes the seed corpus of broken (and a few valid) trace files for fuzz_loader and
// tst_badfiles into DIR (tests/fuzz/corpus). Small on purpose: 512-byte SQLite pages.
//   warpstage_make_fuzz_corpus tests/fuzz/corpus
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

void sql(const std::string& path, const std::string& s)
{
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    char* err = nullptr;
    if (sqlite3_exec(db, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::fprintf(stderr, "%s: %s\n  in %s\n", path.c_str(), err ? err : "?", s.c_str());
        std::exit(1);
    }
    sqlite3_close(db);
}

void bytes(const std::string& path, const std::string& b)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
}

ws::RunRecord tinyRun()
{
    ws::SyntheticParams p;
    p.pattern = ws::SyntheticPattern::WarpSpecialized;
    p.ctas = 1;
    p.smCount = 1;
    p.consumerWarpgroups = 1;
    p.kstepsPerTile = 3;
    p.stages = 2;
    ws::RunRecord r = ws::generateSynthetic(p);
    // keep the stall samples short
    if (r.kernels.size() > 1 && r.kernels[1].stalls.size() > 3)
        r.kernels[1].stalls.resize(3);
    return r;
}

// A valid, compact current-version file.
void valid(const std::string& path)
{
    fs::remove(path);
    {
        auto st = ws::TraceStore::openForWriting(path);
        st.writeRun(tinyRun());
    }
    sql(path, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;");
}

std::string derived(const fs::path& dir, const std::string& base, const std::string& name, const std::string& damage)
{
    const std::string p = (dir / name).string();
    fs::remove(p);
    fs::copy_file(base, p);
    if (!damage.empty())
        sql(p, damage + "; VACUUM;");
    return p;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    const std::string good = (dir / "valid_v2.wstrace").string();
    valid(good);

    // Version 1 (intervals as rows), built from the valid file.
    {
        auto st = ws::TraceStore::openReadOnly(good);
        std::string s = "BEGIN; CREATE TABLE intervals(id INTEGER PRIMARY KEY, warp_id INTEGER NOT NULL, kind INTEGER NOT NULL, "
                        "slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, start_ns INTEGER NOT NULL, "
                        "duration_ns INTEGER NOT NULL);";
        for (const auto& k : st.kernels(st.runs()[0].id)) {
            const auto t = st.loadKernel(k.id);
            for (const auto& l : t.lanes)
                for (std::size_t i = 0; i < l.size(); ++i)
                    s += "INSERT INTO intervals(warp_id, kind, slot, kstep, start_ns, duration_ns) VALUES(" + std::to_string(l.warpId)
                        + "," + std::to_string(int(l.kind[i])) + "," + std::to_string(l.slot[i]) + "," + std::to_string(l.kstep[i])
                        + "," + std::to_string(l.start[i]) + "," + std::to_string(l.duration[i]) + ");";
        }
        // schema 4 packs loads; version 1 had them as rows (an empty table is enough here)
        s += "CREATE TABLE loads(id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL, cta_id INTEGER NOT NULL, "
             "slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, issue_ns INTEGER NOT NULL, "
             "ready_ns INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0); DROP TABLE load_chunks; "
             "DROP TABLE metric_chunks; DROP TABLE phase_names; DROP TABLE sources; DROP TABLE source_texts; ";
        s += "DROP TABLE interval_chunks; PRAGMA user_version = 1; COMMIT";
        derived(dir, good, "valid_v1.wstrace", s);
        derived(dir, (dir / "valid_v1.wstrace").string(), "v1_orphan_interval.wstrace", "UPDATE intervals SET warp_id = 999 WHERE id = 2");
        derived(dir, (dir / "valid_v1.wstrace").string(), "v1_negative_duration.wstrace", "UPDATE intervals SET duration_ns = -7 WHERE id = 3");
    }

    derived(dir, good, "newer_version.wstrace", "PRAGMA user_version = 7");
    derived(dir, good, "missing_loads.wstrace", "DROP TABLE load_chunks");
    derived(dir, good, "missing_runs.wstrace", "DROP TABLE runs");
    derived(dir, good, "missing_column.wstrace", "ALTER TABLE warps DROP COLUMN role_name");
    derived(dir, good, "negative_duration.wstrace",
            "UPDATE interval_chunks SET durations = X'01' || COALESCE(substr(durations, 2), X'') WHERE id = (SELECT MIN(id) FROM interval_chunks)");
    derived(dir, good, "negative_cta.wstrace", "UPDATE ctas SET end_ns = start_ns - 1");
    derived(dir, good, "negative_load.wstrace", "UPDATE load_chunks SET first_issue_ns = -9223372036854775000");
    // Schema 4's packed tables: a valid file using all of them, and damaged chunks
    {
        const std::string packed = (dir / "valid_v4_packed.wstrace").string();
        fs::remove(packed);
        ws::RunRecord r = tinyRun();
        r.kernels[0].phaseNames = {"softmax max", "", "exp sum"};
        for (auto& iv : r.kernels[0].intervals)
            if (iv.kind == ws::IntervalKind::Setup)
                iv.kind = static_cast<ws::IntervalKind>(ws::kUserPhaseBase + 2);
        r.metrics.push_back({0, 1, "cta:0", "compute_ns", 12.5, "ns"});
        r.metrics.push_back({0, 1, "wg:1", "bubble_share", 0.5, "ratio"});
        r.sources = {{"kernels/src/tiny.cu", "", "__global__ void tiny() {}\n"}};
        {
            auto st = ws::TraceStore::openForWriting(packed);
            st.writeRun(r);
        }
        sql(packed, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;");
        derived(dir, packed, "v4_damaged_load_chunk.wstrace", "UPDATE load_chunks SET data = substr(data, 1, 9) || X'00ff00ff' || substr(data, 14)");
        derived(dir, packed, "v4_damaged_metric_chunk.wstrace", "UPDATE metric_chunks SET count = count + 3");
        derived(dir, packed, "v4_damaged_source.wstrace", "UPDATE source_texts SET size = 1000000000");
    }
    // Schema 5's interned names and per-run id ranges: a valid program run, and damaged ones
    {
        const std::string prog = (dir / "valid_v5_program.wstrace").string();
        fs::remove(prog);
        ws::RunRecord r;
        r.info.kind = ws::RunKind::Program;
        r.info.program = "python3";
        for (int i = 0; i < 6; ++i) {
            ws::KernelRecord kr;
            ws::KernelLaunch& k = kr.launch;
            k.name = i % 2 ? "gemm" : "elementwise";
            k.start = 1000 + 100 * i;
            k.end = k.start + 50;
            k.correlationId = std::uint32_t(i + 1);
            ws::ApiSpan a;
            a.name = i % 3 ? "cudaLaunchKernel" : "cuLaunchKernelEx";
            a.start = k.start - 20;
            a.end = a.start + 10;
            a.correlationId = k.correlationId;
            r.apiSpans.push_back(a);
            ws::NvtxRange n;
            n.kind = static_cast<ws::NvtxKind>(i % 3);
            n.domain = i % 2 ? "torch" : "";
            n.name = i % 2 ? "aten::linear" : "step";
            n.start = k.start - 30;
            n.end = n.kind == ws::NvtxKind::Mark ? n.start : k.end;
            r.nvtx.push_back(n);
            r.kernels.push_back(kr);
        }
        {
            auto st = ws::TraceStore::openForWriting(prog);
            st.writeRun(r);
        }
        sql(prog, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;");
        derived(dir, prog, "v5_missing_name.wstrace", "UPDATE api_calls SET name_id = 4242 WHERE id = 3");
        derived(dir, prog, "v5_bad_range.wstrace", "UPDATE runs SET nvtx_first_id = 2, nvtx_last_id = 99");
        derived(dir, prog, "v5_missing_view.wstrace", "DROP VIEW nvtx_ranges");
    }
    derived(dir, good, "orphan_chunk.wstrace", "UPDATE interval_chunks SET warp_id = 12345 WHERE id = 1");
    derived(dir, good, "orphan_warp.wstrace", "UPDATE warps SET cta_id = 12345 WHERE id = 1");
    derived(dir, good, "truncated_blob.wstrace", "UPDATE interval_chunks SET starts = substr(starts, 1, length(starts) - 1)");
    derived(dir, good, "bad_varint.wstrace", "UPDATE interval_chunks SET ksteps = X'FFFFFFFFFFFFFFFFFFFFFFFF' WHERE id = 1");
    derived(dir, good, "lying_count.wstrace", "UPDATE interval_chunks SET count = 4611686018427387904 WHERE id = 1");
    derived(dir, good, "text_blob.wstrace", "UPDATE interval_chunks SET kinds = 'abc' WHERE id = 1");
    derived(dir, good, "out_of_order_chunks.wstrace",
            "INSERT INTO interval_chunks(kernel_id, warp_id, chunk_index, first_start_ns, last_end_ns, count, starts, durations, "
            "kinds, slots, ksteps) SELECT kernel_id, warp_id, chunk_index + 1, first_start_ns - 100000, last_end_ns, count, "
            "starts, durations, kinds, slots, ksteps FROM interval_chunks WHERE id = 1");
    derived(dir, good, "huge_timestamp.wstrace", "UPDATE interval_chunks SET first_start_ns = 9223372036854775000");
    derived(dir, good, "wrong_types.wstrace", "UPDATE kernels SET name = X'00FF', start_ns = 'abc'; UPDATE runs SET variant = 3.5, m = 'x'");

    // Raw byte-level damage
    std::ifstream in(good, std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes((dir / "truncated_half.wstrace").string(), all.substr(0, all.size() / 2));
    bytes((dir / "truncated_header.wstrace").string(), all.substr(0, 60));
    bytes((dir / "empty.wstrace").string(), "");
    bytes((dir / "not_sqlite.wstrace").string(), "run,kernel,start\n1,gemm,0\n");
    {
        std::string flipped = all;
        for (std::size_t i = 1024; i < flipped.size(); i += 97)
            flipped[i] = static_cast<char>(flipped[i] ^ 0x5A);
        bytes((dir / "bitflips.wstrace").string(), flipped);
    }
    // Another application's database
    {
        const std::string p = (dir / "other_app.db").string();
        fs::remove(p);
        sql(p, "PRAGMA page_size = 512; CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES('hello')");
    }
    std::printf("corpus written to %s\n", dir.string().c_str());
    return 0;
}
