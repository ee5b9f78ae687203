#!/bin/sh
# libonce.so exports exactly the calls its public headers declare (lib/include/*.h,
# "ONCE_API ... once_name("), no more (a helper left visible) and no fewer (a call
# declared and never defined, or hidden), each under its tier's version node: once.h's
# under STABLE_NODE, the other headers' under UNSTABLE_NODE (lib/CMakeLists.txt); and
# once.h's list of the read-only calls names every call whose first parameter is a
# `const once_filter *`.
# Usage: exports.sh LIB_DIR LIBONCE_SO STABLE_NODE UNSTABLE_NODE
set -eu
lib=$1
so=$2
stable_node=$3
unstable_node=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Declarations may span lines: join each header into one line first.  Each call is
# listed with the node its header's tier puts it under.
for header in "$lib"/include/*.h; do
  case $(basename "$header") in
    once.h) node=$stable_node ;;
    *) node=$unstable_node ;;
  esac
  tr '\n' ' ' < "$header" | grep -o 'ONCE_API [^;]*' | grep -v '^ONCE_API __attribute__' |
    tee -a "$work/declarations" |
    sed 's/(.*//; s/.*[ *]\(once_[a-z0-9_]*\) *$/\1/' | sed "s/\$/@@$node/"
done | sort > "$work/declared"
[ "$(wc -l < "$work/declared")" -ge 100 ] || { echo "found too few declarations" >&2; exit 1; }
[ "$(grep -c "@@$stable_node\$" "$work/declared")" -ge 30 ] ||
  { echo "found too few declarations in once.h" >&2; exit 1; }
# Every defined dynamic symbol, with its version (name@@NODE; a name without one, or
# under another node, differs from every declared line).
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort > "$work/exported"

status=0
if ! cmp -s "$work/declared" "$work/exported"; then
  echo "exported by $so, not declared in the headers (or under another version node):"
  comm -13 "$work/declared" "$work/exported" | sed 's/^/  /'
  echo "declared in the headers, not exported (or not under this version node):"
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
[ $status -eq 0 ] && echo "$(wc -l < "$work/exported") calls exported, as declared:" \
  "$(grep -c "@@$stable_node\$" "$work/exported") under $stable_node," \
  "$(grep -c "@@$unstable_node\$" "$work/exported") under $unstable_node"
exit $status
