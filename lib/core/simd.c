/*
 * core/simd.c - the SIMD path every layout with SIMD code follows: the best this CPU
 * has, or the one once_force_simd_path chose (once.h).
 *
 * The choice is one process-wide value, so that the blocked filter and the
 * age-partitioned windows never run different paths.  A layout maps the value to its
 * own code when a filter is built (static/blocked.c, window/apbf.c), so forcing a
 * path affects the filters built after.
 */
#include "core/simd.h"

#include <stdatomic.h>
#include <string.h>

/* The best path this CPU has.  The compiler's runtime reads the CPU model once, at
 * load time; __builtin_cpu_init is then a check that changes nothing, so any number of
 * threads may call this at once. */
static once_simd best_path(void)
{
#ifdef ONCE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return ONCE_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2"))
        return ONCE_SIMD_AVX2;
#endif
    return ONCE_SIMD_SCALAR;
}

static bool cpu_supports(once_simd path)
{
#ifdef ONCE_X86
    __builtin_cpu_init();
    if (path == ONCE_SIMD_AVX512)
        return __builtin_cpu_supports("avx512f");
    if (path == ONCE_SIMD_AVX2)
        return __builtin_cpu_supports("avx2");
#endif
    return path == ONCE_SIMD_SCALAR;
}

static const char *const path_names[] = {
    [ONCE_SIMD_SCALAR] = "scalar",
    [ONCE_SIMD_AVX2] = "avx2",
    [ONCE_SIMD_AVX512] = "avx512",
};

#define PATHS (sizeof path_names / sizeof path_names[0])
#define NOT_CHOSEN (-1)

/*
 * The path in use: NOT_CHOSEN until the first use, then the best one or the one
 * forced.  Any thread may ask or force at any time (once.h, "Threads").  The first
 * use only installs the best path if nothing is there yet (compare-and-swap), so a
 * path forced meanwhile by another thread is not overwritten; threads racing on the
 * first use all compute the same best path.
 */
static atomic_int chosen_path = NOT_CHOSEN;

once_simd once_simd_current(void)
{
    int path = atomic_load_explicit(&chosen_path, memory_order_acquire);
    if (path == NOT_CHOSEN) {
        int best = (int)best_path();
        if (atomic_compare_exchange_strong_explicit(&chosen_path, &path, best,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire))
            path = best;
    }
    return (once_simd)path;
}

const char *once_simd_path(void)
{
    return path_names[once_simd_current()];
}

once_status once_force_simd_path(const char *name)
{
    once_simd path = best_path();
    if (name != NULL) {
        size_t i = 0;
        while (i < PATHS && strcmp(name, path_names[i]) != 0)
            i++;
        if (i == PATHS || !cpu_supports((once_simd)i))
            return ONCE_ERR_UNSUPPORTED;
        path = (once_simd)i;
    }
    atomic_store_explicit(&chosen_path, (int)path, memory_order_release);
    return ONCE_OK;
}
