#!/bin/sh
# libonce.so exports exactly the calls its public headers declare (lib/include/*.h,
# "ONCE_API ... once_name("), no more (a helper left visible) and no fewer (a call
# declared and never defined, or hidden); and once.h's list of the read-only calls
# names every call whose first parameter is a `const once_filter *`.
# Usage: exports.sh LIB_DIR LIBONCE_SO
set -eu
lib=$1
so=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Declarations may span lines: join each header into one line first.
for header in "$lib"/include/*.h; do
  tr '\n' ' ' < "$header" | grep -o 'ONCE_API [^;]*' | grep -v '^ONCE_API __attribute__'
done > "$work/declarations"
sed 's/(.*//; s/.*[ *]\(once_[a-z0-9_]*\) *$/\1/' "$work/declarations" | sort > "$work/declared"
[ "$(wc -l < "$work/declared")" -ge 100 ] || { echo "found too few declarations" >&2; exit 1; }
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { sub(/@.*/, "", $3); print $3 }' |
  sort > "$work/exported"

status=0
if ! cmp -s "$work/declared" "$work/exported"; then
  echo "exported by $so, not declared in the headers:"
  comm -13 "$work/declared" "$work/exported" | sed 's/^/  /'
  echo "declared in the headers, not exported:"
  comm -23 "$work/declared" "$work/exported" | sed 's/^/  /'
  status=1
fi

# The read-only list: once.h's "Threads" paragraph, from "The read-only calls" to "They
# change nothing".
sed -n '/The read-only calls are the/,/They change nothing/p' "$lib/include/once.h" |
  grep -o 'once_[a-z0-9_]*' | sort -u > "$work/listed"
grep 'once_[a-z0-9_]* *( *const once_filter \*' "$work/declarations" |
  sed 's/(.*//; s/.*[ *]\(once_[a-z0-9_]*\) *$/\1/' | sort -u > "$work/readers"
missing=$(comm -23 "$work/readers" "$work/listed")
if [ -n "$missing" ]; then
  echo "take a const once_filter * first, missing from once.h's read-only list:"
  echo "$missing" | sed 's/^/  /'
  status=1
fi
[ $status -eq 0 ] && echo "$(wc -l < "$work/exported") calls exported, as declared"
exit $status
