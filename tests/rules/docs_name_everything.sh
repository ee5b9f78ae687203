#!/bin/sh
# The docs name what the code has, so a structure or a --filter name cannot be added
# to the code alone:
#   - README.md's structure table ("| structure | layout | ...") has a row for every
#     structure the library registers (ONCE_<NAME>);
#   - every name `once --filter` accepts (its own list, from the refusal of an unknown
#     name) is in the man page's --filter entry (.B NAME or .BR NAME) and in the
#     README's options table (`NAME`).
# Usage: docs_name_everything.sh SOURCE_DIR STRUCTURE_NAMES_BINARY ONCE_BINARY
set -eu
src=$1
names_bin=$2
once_bin=$3
bad=0

registered=$("$names_bin")
[ -n "$registered" ] || { echo "the library lists no structure" >&2; exit 1; }
# The README's structure table: from its header row to the first line not a row.
table=$(awk '/^\| structure \| layout \|/ { on = 1 } on && !/^\|/ { exit } on' "$src/README.md")
[ -n "$table" ] || { echo "README.md has no structure table" >&2; exit 1; }
for name in $registered; do
  upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
  if ! printf '%s\n' "$table" | grep -q "^| \`ONCE_$upper\` |"; then
    echo "README.md's structure table has no row for ONCE_$upper (structure '$name')" >&2
    bad=1
  fi
done

# The CLI's names: "unknown filter 'x' (a, b, ... or z)".
refusal=$("$once_bin" --filter '?' < /dev/null 2>&1 >/dev/null || true)
accepted=$(printf '%s\n' "$refusal" | sed -n "s/^once: unknown filter '?' (\(.*\))\$/\1/p" |
           sed 's/,/ /g; s/ or / /')
[ -n "$accepted" ] || { echo "once --filter '?' did not list the names: $refusal" >&2; exit 1; }
entry=$(awk '/^\.BI \\-\\-filter " NAME"/ { on = 1; next } on && /^\.TP/ { exit } on' \
        "$src/programs/once.1")
options=$(awk '/^\| option \| meaning \|/ { on = 1 } on && !/^\|/ { exit } on' "$src/README.md")
for name in $accepted; do
  if ! printf '%s\n' "$entry" | grep -Eq "^\.BR? $name( |\$)"; then
    echo "the man page's --filter entry does not name '$name', which --filter accepts" >&2
    bad=1
  fi
  if ! printf '%s\n' "$options" | grep -q "\`$name\`"; then
    echo "README.md's options table does not name '$name', which --filter accepts" >&2
    bad=1
  fi
done
exit $bad
