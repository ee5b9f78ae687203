/*
 * core/simd.h - which SIMD instruction sets this build can call, and the path chosen
 * at run time (simd.c).
 */
#ifndef ONCE_CORE_SIMD_H
#define ONCE_CORE_SIMD_H

#include "once_advanced.h"

/* x86 SIMD paths are compiled for instruction sets the build does not assume and chosen
 * at run time (once_simd_path), so each such function carries its target. */
#if defined(__x86_64__) || defined(__i386__)
#define ONCE_X86 1
#define ONCE_TARGET_AVX2 __attribute__((target("avx2")))
#define ONCE_TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define ONCE_TARGET_AVX2
#define ONCE_TARGET_AVX512
#endif

/* The SIMD path in use (simd.c): the best this CPU has, or the one
 * once_force_simd_path chose.  A filter records it when built, so forcing a path
 * affects the filters built after. */
typedef enum once_simd { ONCE_SIMD_SCALAR, ONCE_SIMD_AVX2, ONCE_SIMD_AVX512 } once_simd;
once_simd once_simd_current(void);

#endif /* ONCE_CORE_SIMD_H */
