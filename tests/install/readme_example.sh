#!/usr/bin/env bash
# The README's library example is a whole program: build it against the build tree
# through its uninstalled pkg-config file, nothing installed, and check that it keeps an
# hour of event time as the README says.
# Usage: readme_example.sh SOURCE_DIR BUILD_DIR
set -eu
SOURCE=$1
BUILD=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/once-readme.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
awk '/^```c$/ { n++; if (n == 2) { keep = 1; next } } /^```$/ { keep = 0 } keep' \
  "$SOURCE/README.md" > "$WORK/dedup.c"
grep -q 'int main' "$WORK/dedup.c" || { echo "no program in the README's second C block"; exit 1; }
PKG_CONFIG_PATH="$BUILD/lib" cc -O2 -Wall -Wextra -Werror "$WORK/dedup.c" \
  $(PKG_CONFIG_PATH="$BUILD/lib" pkg-config --cflags --libs once) -o "$WORK/dedup"
printf '1000\ta\n2000\ta\n3900000\ta\n' | "$WORK/dedup" > "$WORK/got"
printf '1000\ta\n3900000\ta\n' > "$WORK/want"
cmp "$WORK/got" "$WORK/want" || { echo "dedup printed:"; cat "$WORK/got"; exit 1; }
echo "README example: built against the tree, keeps an hour of event time"
