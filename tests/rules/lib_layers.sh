#!/bin/sh
# The dependency rule of lib/ (docs/ARCHITECTURE.md): the folders are layers,
#     core <- math <- static <- window, grow, site <- api <- slice,
# and a file uses (includes, or calls or reads a symbol defined in) only files of its
# own folder or of a lower layer; window, grow and site share a layer and use none of each
# other nor api.  Over the include graph and the symbol graph of the compiled objects
# together, no files depend on each other in a circle, inside a folder either.
# Usage: lib_layers.sh LIB_DIR OBJECT...   (the objects of lib/, as built; CMake may
# pass them as one argument separated by semicolons)
set -eu
lib=$1
shift
# shellcheck disable=SC2046
set -- $(printf '%s\n' "$@" | tr ';' '\n')
[ $# -ge 10 ] || { echo "expected the library's objects, got $# files" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Edges "from to", one per line, between files named relative to lib/ ("core/hash.h").
# Includes: a quoted include names a path relative to lib/ or the public header.
( cd "$lib" && find core math static window grow site api slice -name '*.[ch]' | sort ) > "$work/files"
[ -s "$work/files" ] || { echo "no sources under $lib" >&2; exit 1; }
while read -r file; do
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$lib/$file" |
  while read -r target; do
    case $target in
      once.h | once_advanced.h | once_sliced.h | once_math.h) ;;
      *)
        if [ ! -f "$lib/$target" ]; then
          echo "$file includes \"$target\", which is not a path under lib/" >&2
          echo missing >> "$work/bad"
        fi
        echo "$file $target" ;;
    esac
  done
done < "$work/files" > "$work/edges"

# Symbols: an object uses the file that defines a symbol it leaves undefined.
for object in "$@"; do
  source=$(echo "$object" | sed -nE 's@.*/((core|math|static|window|grow|site|api|slice)/[^/]*[.]c)[.]o$@\1@p')
  [ -n "$source" ] || { echo "cannot tell the source of $object" >&2; exit 1; }
  nm --defined-only -g "$object" | awk -v f="$source" 'NF == 3 { print "def", $3, f }'
  nm -u "$object" | awk -v f="$source" '{ print "use", $NF, f }'
done > "$work/symbols"
awk '$1 == "def" { at[$2] = $3 } $1 == "use" { used[NR] = $2; by[NR] = $3 }
     END { for (i in used) if ((used[i] in at) && at[used[i]] != by[i]) print by[i], at[used[i]] }' \
  "$work/symbols" >> "$work/edges"
sort -u "$work/edges" -o "$work/edges"
[ -s "$work/edges" ] || { echo "no dependencies found: wrong objects?" >&2; exit 1; }

# The layers.
awk '
  function layer(path, folder) {
    folder = path; sub(/\/.*/, "", folder)
    if (folder == "core") return 0
    if (folder == "math") return 1
    if (folder == "static") return 2
    if (folder == "window" || folder == "grow" || folder == "site") return 3
    if (folder == "api") return 4
    if (folder == "slice") return 5
    return -1
  }
  {
    from = $1; to = $2
    ff = from; sub(/\/.*/, "", ff); tf = to; sub(/\/.*/, "", tf)
    if (ff == tf) next
    if (layer(to) < 0 || layer(from) < 0 || layer(to) >= layer(from)) {
      print from " uses " to ": against the layers core <- math <- static <- window, grow, site <- api <- slice"
      bad = 1
    }
  }
  END { exit bad }' "$work/edges" >&2 || echo layers >> "$work/bad"

# No circle: a file and its header count as one (a .c includes its own .h).
sed 's/\.[ch]\( \|$\)/\1/g' "$work/edges" | awk '$1 != $2' | sort -u > "$work/units"
if ! tsort "$work/units" > /dev/null 2> "$work/loop"; then
  echo "files of lib/ depend on each other in a circle:" >&2
  cat "$work/loop" >&2
  echo circle >> "$work/bad"
fi

if [ -e "$work/bad" ]; then
  exit 1
fi
echo "lib/: $(wc -l < "$work/files") files, $(wc -l < "$work/edges") dependencies, layered, no circle"
