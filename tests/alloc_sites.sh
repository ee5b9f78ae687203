#!/bin/sh
# Every allocation of the library goes through lib/alloc.c (once_set_allocator): no other
# file of lib/ calls the C library's allocator, nor a function that would allocate with
# it behind the host's back (XXH3_createState, qsort, zstd's own contexts).  test_alloc
# catches such a call on the paths it runs; this catches it on every path.
# Usage: alloc_sites.sh LIB_DIR
set -eu
lib=$1
found=$(grep -nE '(^|[^_[:alnum:]])(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup|qsort|XXH3_createState|ZSTD_compress|ZSTD_decompress|ZSTD_createCCtx|ZSTD_createDCtx)[[:space:]]*\(' \
  "$lib"/*.c "$lib"/*.h | grep -v "^$lib/alloc\.c:" || true)
if [ -n "$found" ]; then
  echo "allocations outside $lib/alloc.c:" >&2
  echo "$found" >&2
  exit 1
fi
