#!/bin/sh
# Every allocation of the library goes through lib/core/alloc.c (once_set_allocator): no
# other file of lib/ calls the C library's allocator, nor a function that would allocate
# with it behind the host's back (XXH3_createState, qsort, zstd's own contexts).
# test_alloc catches such a call on the paths it runs; this catches it on every path.
# Usage: alloc_sites.sh LIB_DIR
set -eu
lib=$1
hook="$lib/core/alloc.c"
# The hook itself must be where this check expects it, or the check would pass on
# nothing at all.
grep -q 'once_set_allocator' "$hook"
sources=$(find "$lib" -name '*.[ch]' | wc -l)
if [ "$sources" -lt 10 ]; then
  echo "only $sources source files under $lib: wrong directory?" >&2
  exit 1
fi
found=$(grep -rnE --include='*.c' --include='*.h' --exclude-dir=include \
  '(^|[^_[:alnum:]])(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup|qsort|XXH3_createState|ZSTD_compress|ZSTD_decompress|ZSTD_createCCtx|ZSTD_createDCtx)[[:space:]]*\(' \
  "$lib" | grep -v "^$hook:" || true)
if [ -n "$found" ]; then
  echo "allocations outside $hook:" >&2
  echo "$found" >&2
  exit 1
fi
