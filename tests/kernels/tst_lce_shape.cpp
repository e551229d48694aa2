// CPU test (no GPU, runs in CI): the host logic of the linear-compression driver (kernels/lce/lce_shape.h):
// which rung refuses which shape and with what sentence, the useful-FLOP count, the candidate -> user
// mapping (contiguous and shuffled), the bytes-moved model's order across rungs, K padding, the option
// parser's refusals, and rungs 3-4's walk (224 x 256 tiles, one CTA pair per unit, one flag per user
// tile half per CTA; the broadcast walk and when rung 4 takes it). Exit: 0 passed, 1 failed.
#include "lce_shape.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

using namespace ws::lce;

namespace {
// The ready flags the driver allocates for rung 4 (lce_rungs.h: lceFlagCount = userFirstWalk(s, 1).flags): a launch
// with any number of resident pairs must need no more.
std::size_t flagBuffer(const Shape& s) { return userFirstWalk(s, 1).flags; }

int g_fail = 0;
void expect(bool ok, const std::string& what)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    if (!ok) ++g_fail;
}

std::string parse(std::vector<const char*> args, Options& o)
{
    args.insert(args.begin(), "lce");
    return parseOptions(int(args.size()), const_cast<char**>(args.data()), o);
}

}  // namespace

int main()
{
    const Shape bench;  // the benchmark point is the default
    expect(bench.m == 433 && bench.n == 256 && bench.kUser == 1178 && bench.kCand == 866 && bench.b == 1024
               && bench.perUser == 70,
           "the default shape is the benchmark point");
    expect(bench.users() == 15, "1024 candidates, 70 per user: 15 users");
    // 2*M*N*(Kc*B + Ku*users), the user GEMM counted once per user
    const double flops = 2.0 * 433 * 256 * (866.0 * 1024 + 1178.0 * 15);
    expect(bench.flops() == flops, "useful FLOPs at the benchmark point: " + std::to_string(bench.flops()));
    expect(padK(866) == 872 && padK(1178) == 1184 && padK(8) == 8 && padK(1) == 8, "K padded to multiples of 8");

    // refusals
    for (int r = 0; r < kRungs; ++r) expect(refusal(r, bench).empty(), "rung " + std::to_string(r) + " takes the benchmark point");
    Shape n100 = bench;
    n100.n = 100;
    for (int r = 0; r < 3; ++r) expect(refusal(r, n100).empty(), "rung " + std::to_string(r) + " takes N = 100");
    for (int r = 3; r < kRungs; ++r) {
        const std::string why = refusal(r, n100);
        expect(why.find("multiple of 8") != std::string::npos && why.find("100") != std::string::npos,
               "rung " + std::to_string(r) + " refuses N = 100 with a sentence: " + why);
    }
    Shape n200 = bench;
    n200.n = 200;  // not a multiple of 64, a multiple of 8
    for (int r = 0; r < kRungs; ++r) expect(refusal(r, n200).empty(), "rung " + std::to_string(r) + " takes N = 200");
    Shape m1 = bench;
    m1.m = 1;
    m1.perUser = 1;  // every candidate its own user
    for (int r = 0; r < kRungs; ++r) expect(refusal(r, m1).empty(), "rung " + std::to_string(r) + " takes M = 1, one candidate per user");
    Shape zero = bench;
    zero.kCand = 0;
    for (int r = 0; r < kRungs; ++r) expect(!refusal(r, zero).empty(), "rung " + std::to_string(r) + " refuses K_cand = 0");
    expect(!refusal(5, bench).empty() && !refusal(-1, bench).empty(), "there is no rung 5 or -1");

    // mapping
    const std::vector<std::int32_t> u = userMapping(bench);
    expect(u.size() == 1024 && u[0] == 0 && u[69] == 0 && u[70] == 1 && u[1023] == 14, "contiguous mapping: b / 70");
    Shape sh = bench;
    sh.shuffled = true;
    const std::vector<std::int32_t> v = userMapping(sh);
    std::vector<std::int32_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    expect(sorted == u, "the shuffled mapping is a permutation of the contiguous one");
    expect(v != u, "the shuffled mapping is shuffled");
    expect(v == userMapping(sh), "the shuffled mapping depends only on the seed");
    sh.seed = 2;
    expect(v != userMapping(sh), "another seed, another mapping");

    // bytes-moved model: every rung below moves more than the one above; rung 4 moves the least
    const double b0 = bytesMoved(0, bench), b1 = bytesMoved(1, bench), b2 = bytesMoved(2, bench),
                 b3 = bytesMoved(3, bench), b4 = bytesMoved(4, bench), c = compulsoryBytes(bench);
    expect(b0 > b1 && b1 == b2 && b2 > b3 && b3 > b4 && b4 >= c, "bytes moved: rung 0 > 1 = 2 > 3 > 4 >= compulsory");
    expect(c > 690e6 && c < 700e6, "compulsory traffic at the benchmark point ~0.69 GB: " + std::to_string(c));

    // options
    Options o;
    expect(parse({"--rung", "3", "--n", "200", "--time"}, o).empty() && o.rung == 3 && o.shape.n == 200 && o.time
               && !o.check,
           "options: --rung 3 --n 200 --time");
    Options d;
    expect(parse({}, d).empty() && d.check && d.rung == -1, "no options: check every rung");
    Options e;
    expect(!parse({"--rung", "7"}, e).empty(), "--rung 7 is refused");
    {
        Options t;
        expect(parse({"--rung", "4", "--trace-cost"}, t).empty() && t.traceCost && !t.check && !t.time,
               "--trace-cost alone: no check, no plain timing");
        Options t2;
        expect(!parse({"--rung", "2", "--trace-cost"}, t2).empty(), "--trace-cost on an uninstrumented rung is refused");
        Options t3;
        expect(parse({"--trace-cost"}, t3).empty() && t3.rung == -1, "--trace-cost for all rungs: rungs 3-4 measured");
    }
    {
        Options ab;
        expect(parse({"--interleave", "3,4"}, ab).empty() && ab.abA == 3 && ab.abB == 4 && !ab.check && !ab.time,
               "--interleave 3,4: rungs 3 and 4 alternately, no check asked");
        Options bad;
        unsetenv("LCE_TVAR_B");
        expect(!parse({"--interleave", "3,3"}, bad).empty(), "--interleave of one rung with itself is refused");
        setenv("LCE_TVAR_B", "10", 1);  // s10-lcespeed: a kernel configuration against the rung itself
        Options same;
        expect(parse({"--interleave", "4,4"}, same).empty() && same.abA == 4 && same.abB == 4,
               "--interleave 4,4 with LCE_TVAR_B set: the variant against the rung");
        unsetenv("LCE_TVAR_B");
        expect(!parse({"--interleave", "3,5"}, bad).empty(), "--interleave 3,5 is refused (no rung 5)");
        expect(!parse({"--interleave", "34"}, bad).empty(), "--interleave without a comma is refused");
        expect(!parse({"--interleave"}, bad).empty(), "--interleave without a value is refused");
    }
    {  // rungs 3-4's kernel configurations and their switches (LCE_TVAR, LCE_TVAR_B, LCE_R4UF)
        expect(configKind(kRung3Config) == ConfigKind::Rung3 && configKind(kRung4BroadcastConfig) == ConfigKind::Rung4Broadcast
                   && configKind(kRung4UserFirstConfig) == ConfigKind::Rung4UserFirst,
               "the rungs' configurations: 0 rung 3, 10 rung 4's broadcast walk, 15 rung 4's user-first walk");
        bool removed = true;  // the variant numbers measured and removed (docs/kernel-notes/lce-first-round.md)
        for (int v : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21, -1})
            removed = removed && configKind(v) == ConfigKind::None;
        expect(removed, "no configuration of a removed variant number");
        int c = -1;
        expect(parseConfigSwitch("LCE_TVAR", "10", c).empty() && c == 10, "LCE_TVAR=10: rung 4's broadcast walk");
        c = -1;
        expect(parseConfigSwitch("LCE_TVAR_B", "0", c).empty() && c == 0, "LCE_TVAR_B=0: rung 3's configuration");
        c = -1;
        expect(parseConfigSwitch("LCE_R4UF", "15", c).empty() && c == 15, "LCE_R4UF=15: rung 4's user-first walk");
        c = -1;
        const std::string gone = parseConfigSwitch("LCE_TVAR", "16", c);
        expect(gone.rfind("LCE_TVAR=16: no such kernel configuration", 0) == 0 && c == -1,
               "LCE_TVAR=16 refused with a sentence naming the switch (got '" + gone + "')");
        const std::string bcast = parseConfigSwitch("LCE_R4UF", "10", c);
        expect(bcast.rfind("LCE_R4UF=10: not a configuration of rung 4's user-first walk", 0) == 0 && c == -1,
               "LCE_R4UF=10 refused: the broadcast walk is not a user-first configuration (got '" + bcast + "')");
        expect(!parseConfigSwitch("LCE_TVAR", "x", c).empty() && !parseConfigSwitch("LCE_TVAR", "", c).empty()
                   && !parseConfigSwitch("LCE_TVAR", "15 ", c).empty() && c == -1,
               "LCE_TVAR: a value that is not a number refused");
        for (const char* name : {"LCE_TVAR", "LCE_TVAR_B", "LCE_R4UF"}) {
            Options o1;
            setenv(name, "13", 1);
            const std::string err = parse({"--rung", "4"}, o1);
            unsetenv(name);
            expect(err.rfind(std::string(name) + "=13: ", 0) == 0,
                   std::string("the option parser refuses ") + name + "=13 (got '" + err + "')");
        }
        Options o2;
        setenv("LCE_TVAR", "15", 1);
        expect(parse({"--rung", "4"}, o2).empty(), "the option parser takes LCE_TVAR=15");
        unsetenv("LCE_TVAR");
    }
    expect(!parse({"--m", "x"}, e).empty(), "--m x is refused");
    expect(!parse({"--m", "-4"}, e).empty(), "--m -4 is refused");
    expect(!parse({"--b"}, e).empty(), "--b without a value is refused");
    expect(!parse({"--frobnicate"}, e).empty(), "an unknown option is refused");
    expect(!parse({"--iters", "0"}, e).empty(), "--iters 0 is refused");

    // rungs 3-4's walk (lce_body.cuh's host side; rung 3 walks the same units without the user part): since s9-lcet
    // tiles of 224 rows of M x 256 columns of N, each unit one CTA pair (a CTA per 128-wide N half)
    {
        const UserFirstWalk w = userFirstWalk(bench, 66);
        expect(w.mTiles == 2 && w.mUnits == 2 && w.nTiles == 1 && w.userUnits == 15 * 2 && w.units == (15 + 1024) * 2,
               "user-first walk at the benchmark point: 2 M tiles of 224, one N tile of 256, 30 user units, 2078 units");
        expect(w.clusters == 66, "user-first walk: 66 resident pairs, all used (got " + std::to_string(w.clusters) + ")");
        expect(w.flags == size_t(15) * 2 * 1 * 2 * 2,
               "user-first walk: one flag per (user, M tile, N tile, CTA, half) (120 at the benchmark point)");
        expect(userFirstWalk(bench, 1).clusters == 1, "user-first walk: one resident pair stays one");
        Shape few = m1;  // M = 1: one M unit, so no stride is a multiple-of-M-units problem; 12 units < 66 pairs
        few.b = 9;
        few.perUser = 4;
        const UserFirstWalk f = userFirstWalk(few, 66);
        expect(f.mUnits == 1 && f.units == 3 + 9 && f.clusters == 12,
               "user-first walk: fewer units than pairs -> one pair per unit (got " + std::to_string(f.clusters) + ")");
        // the flags it needs fit the buffer the driver allocates for rung 4, at odd shapes and
        // over the whole sweep
        std::vector<Shape> shapes = {bench, n200, m1, few};
        Shape n264 = bench;  // two N tiles of 256, the second 8 columns wide
        n264.m = 257;
        n264.n = 264;
        n264.perUser = 1000;
        shapes.push_back(n264);
        Shape own = bench;  // every candidate its own user
        own.b = 200;
        own.perUser = 1;
        shapes.push_back(own);
        Shape n64 = bench;  // N = 64: a quarter of an N tile
        n64.n = 64;
        shapes.push_back(n64);
        for (int b : {512, 1024, 2048, 3072})
            for (int pu : {2, 5, 10, 50, 100, 1000}) {
                Shape sh = bench;
                sh.b = b;
                sh.perUser = pu;
                shapes.push_back(sh);
            }
        bool fits = true;
        std::string where;
        for (const Shape& sh : shapes) {
            const UserFirstWalk v = userFirstWalk(sh, 66);
            const size_t last =
                (((size_t(sh.users() - 1) * v.mTiles + (v.mTiles - 1)) * v.nTiles + (v.nTiles - 1)) * 2 + 1) * 2 + 1;
            if (!(last < v.flags && v.flags <= flagBuffer(sh))) {
                fits = false;
                where = sh.text();
            }
        }
        expect(fits, "user-first walk: every user tile half's flag fits the allocated buffer" + (where.empty() ? std::string() : " (not at " + where + ")"));
    }

    // rung 4's broadcast walk (s11-lceuser): one unit per (user, M tile, N tile), its user tile then its candidates'
    // tiles on the same CTA pair; no flags. Chosen per shape: few candidates per user, the unshuffled mapping.
    {
        Shape two = bench;
        two.b = 2048;
        two.perUser = 2;
        const UserFirstWalk w = userFirstWalk(two, 66, true);
        expect(w.broadcast && w.units == 1024 * 2 && w.userUnits == w.units && w.flags == 0 && w.clusters == 66,
               "broadcast walk at B = 2048, 2 per user: 2048 units (1024 users x 2 M tiles), each starting with its "
               "user tile, no ready flags (got " + std::to_string(w.units) + " units)");
        const UserFirstWalk c = userFirstWalk(two, 66);
        expect(!c.broadcast && c.units == (1024 + 2048) * 2, "the user-first walk of the same shape: 6144 units");
        Shape odd = two;  // B not a multiple of perUser: the last user has one candidate
        odd.b = 51;
        expect(userFirstWalk(odd, 66, true).units == 26 * 2, "broadcast walk, B = 51 at 2 per user: 26 users' units");
        // the rule over the sweep, 66 pairs (H200): 2 per user everywhere (its last round leaves 3.1 % of the pairs'
        // slots idle at B = 512 .. 2048, 1.0 % at 3072), 5 per user at B = 2048 (4.6 %) and 3072 (2.0 %), not at
        // B = 512 (206 units: 28 %) or 1024 (12.7 %), nothing with 10 or more per user
        std::string picked;
        for (int b : {512, 1024, 2048, 3072})
            for (int pu : {2, 5, 10, 50, 100, 1000}) {
                Shape sh = bench;
                sh.b = b;
                sh.perUser = pu;
                if (rung4Broadcast(sh, 66)) picked += " " + std::to_string(b) + "/" + std::to_string(pu);
            }
        expect(picked == " 512/2 1024/2 2048/2 2048/5 3072/2 3072/5",
               "rung 4 takes the broadcast walk at 2 per user and at 5 per user with B >= 2048 (got" + picked + ")");
        Shape own = bench;  // every candidate its own user, 200 candidates: 400 units leave 15 % idle
        own.b = 200;
        own.perUser = 1;
        expect(!rung4Broadcast(own, 66) && rung4Broadcast(own, 100), "... with 1 per user where its units balance");
        Shape shuffled = two;
        shuffled.shuffled = true;
        expect(!rung4Broadcast(shuffled, 66), "... never with a shuffled mapping (a user's candidates not contiguous)");
        expect(!rung4Broadcast(two, 0), "... nor without a count of resident pairs");
        Options us;
        expect(parse({"--user-stage"}, us).empty() && us.userStage && !us.check && !us.time,
               "--user-stage alone: the stage timing, no check asked");
    }

    std::printf("%s: %d failure(s)\n", g_fail ? "FAILED" : "PASSED", g_fail);
    return g_fail ? 1 : 0;
}
