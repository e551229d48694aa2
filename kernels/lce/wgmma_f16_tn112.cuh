// GENERATED like wgmma_f16_tn224.cuh (scripts/kernels/gen_wgmma.py's gen(112, "f16", 0, "_f16tn") with imm-trans-a
// set to 1), but on columns Off .. Off + 55 of a 112-register (n224) accumulator, so that a consumer can split the last
// k-step of an n224 tile into two n112 commit groups (s10-lcespeed, lce_body.cuh's kVariant.split). Do not edit by hand.
#pragma once
#include <cstdint>
namespace ws::lce {
// D[64x112] (+)= A[64x16] * B[112x16]^T; D = registers Off .. Off + 55 of d (columns 2 Off .. 2 Off + 111 of an n224
// accumulator: the wgmma fragment holds 4 registers per 8 columns).
template <int Off>
__device__ __forceinline__ void wgmma_m64n112k16_f16tn(float (&d)[112], uint64_t descA, uint64_t descB, int scaleD)
{
    static_assert(Off == 0 || Off == 56, "one of the two halves");
    asm volatile(
        "{\n.reg .pred p;\n"
        "setp.ne.b32 p, %58, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n112k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, "
        "%56, %57, p, 1, 1, 1, 0;\n}\n"
        : "+f"(d[Off + 0]), "+f"(d[Off + 1]), "+f"(d[Off + 2]), "+f"(d[Off + 3]), "+f"(d[Off + 4]), "+f"(d[Off + 5]), "+f"(d[Off + 6]), "+f"(d[Off + 7]), "+f"(d[Off + 8]), "+f"(d[Off + 9]), "+f"(d[Off + 10]), "+f"(d[Off + 11]), "+f"(d[Off + 12]), "+f"(d[Off + 13]), "+f"(d[Off + 14]), "+f"(d[Off + 15]), "+f"(d[Off + 16]), "+f"(d[Off + 17]), "+f"(d[Off + 18]), "+f"(d[Off + 19]), "+f"(d[Off + 20]), "+f"(d[Off + 21]), "+f"(d[Off + 22]), "+f"(d[Off + 23]), "+f"(d[Off + 24]), "+f"(d[Off + 25]), "+f"(d[Off + 26]), "+f"(d[Off + 27]), "+f"(d[Off + 28]), "+f"(d[Off + 29]), "+f"(d[Off + 30]), "+f"(d[Off + 31]), "+f"(d[Off + 32]), "+f"(d[Off + 33]), "+f"(d[Off + 34]), "+f"(d[Off + 35]), "+f"(d[Off + 36]), "+f"(d[Off + 37]), "+f"(d[Off + 38]), "+f"(d[Off + 39]), "+f"(d[Off + 40]), "+f"(d[Off + 41]), "+f"(d[Off + 42]), "+f"(d[Off + 43]), "+f"(d[Off + 44]), "+f"(d[Off + 45]), "+f"(d[Off + 46]), "+f"(d[Off + 47]), "+f"(d[Off + 48]), "+f"(d[Off + 49]), "+f"(d[Off + 50]), "+f"(d[Off + 51]), "+f"(d[Off + 52]), "+f"(d[Off + 53]), "+f"(d[Off + 54]), "+f"(d[Off + 55])
        : "l"(descA), "l"(descB), "r"(scaleD));
}

}  // namespace ws::lce
