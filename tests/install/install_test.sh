#!/usr/bin/env bash
# `make install` puts a usable library, header, pkg-config file, binary, manual page,
# Redis module and Python package under a prefix: install the build tree into a scratch prefix, build programs against
# it with pkg-config (static and shared), run them and the installed `once`, and check
# the manual page against `once --help`.  The programs are one of the stable tier
# (once.h alone, built as is, binding only the stable version node) and one of the
# unstable tiers (built with ONCE_USE_UNSTABLE_API, without which the headers refuse).
# Usage: install_test.sh BUILD_DIR
set -eu
BUILD=$1
PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/once-install.XXXXXX")
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null
libdir=$(ls -d "$PREFIX"/lib*/ | head -n 1)
for f in include/once.h include/once_advanced.h include/once_sliced.h include/once_math.h bin/once share/man/man1/once.1; do
  [ -e "$PREFIX/$f" ] || { echo "missing $f"; exit 1; }
done
ls "$libdir"/libonce.a "$libdir"/libonce.so "$libdir"/pkgconfig/once.pc > /dev/null
# The module, where the docs load it from (docs/REDIS.md, docs/CLUSTER.md).
[ -f "$libdir"/redis/modules/once.so ] || { echo "missing lib/redis/modules/once.so"; exit 1; }
# The Python package, where Debian's interpreter looks under the prefix, importable and
# answering from outside the tree.
site=$(ls -d "$PREFIX"/lib/python3*/*-packages 2>/dev/null | head -n 1)
[ -f "$site/once/__init__.py" ] || { echo "missing the Python package under $PREFIX/lib"; exit 1; }
(cd "$PREFIX" && PYTHONPATH="$site" /usr/bin/python3 -c '
import once
f = once.Filter(capacity=100, seed=1)
assert f.add("k") and not f.add("k") and once.loads(bytes(f)).contains("k")
assert once.__file__.startswith("'"$site"'"), once.__file__
') || { echo "the installed Python package does not work"; exit 1; }
# The stable tier: once.h alone, no define.
cat > "$PREFIX/stable.c" <<'C'
#include <once.h>
#include <stdio.h>
int main(void)
{
    once_config config;
    once_config_init(&config, ONCE_BLOCKED);
    config.capacity = 1000;
    config.error = 0.01;
    once_filter *f = NULL;
    if (once_create(&f, &config) != ONCE_OK)
        return 1;
    bool first = true, second = false;
    once_test_and_add(f, "k", 1, 0, &first);
    once_test_and_add(f, "k", 1, 0, &second);
    once_stats stats;
    if (once_get_stats(f, &stats) != ONCE_OK || stats.items != 1)
        return 1;
    once_free(f);
    printf("%d %d %s\n", first, second, once_version());
    return !(first == 0 && second == 1);
}
C
# The unstable tiers, with their define.
cat > "$PREFIX/example.c" <<'C'
#define ONCE_USE_UNSTABLE_API
#include <once.h>
#include <once_math.h>
#include <once_sliced.h>
#include <stdio.h>
int main(void)
{
    once_filter *f = NULL;
    if (!(once_fpr_standard(9586, 7, 1000) < 0.011))
        return 1;
    if (once_create_for_capacity(&f, ONCE_BLOCKED, 1000, 0.01) != ONCE_OK)
        return 1;
    bool first = true, second = false;
    once_test_and_add(f, "k", 1, 0, &first);
    once_test_and_add(f, "k", 1, 0, &second);
    once_free(f);
    printf("%d %d %s\n", first, second, once_version());
    return !(first == 0 && second == 1);
}
C
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cflags=$(pkg-config --cflags once)
for program in stable example; do
  cc -Wall -Wextra -Werror -o "$PREFIX/$program-shared" "$PREFIX/$program.c" \
     $(pkg-config --cflags --libs once)
  LD_LIBRARY_PATH="$libdir" "$PREFIX/$program-shared"
  cc -Wall -Wextra -Werror -o "$PREFIX/$program-static" "$PREFIX/$program.c" $cflags \
     "$libdir/libonce.a" $(pkg-config --static --libs-only-l once | sed "s/-lonce//")
  "$PREFIX/$program-static"
done
# The stable program binds only the stable node; the other binds the version's own node
# too, so that it fails to load against another version.
undefined() { nm -D --undefined-only "$1" | awk '{ print $2 }' | grep '^once_'; }
if undefined "$PREFIX/stable-shared" | grep -v '@ONCE_1$'; then
  echo "the stable program binds calls outside ONCE_1"; exit 1
fi
node="ONCE_PRIVATE_$(pkg-config --modversion once)"
undefined "$PREFIX/example-shared" | grep -q "@$node\$" ||
  { echo "the unstable program binds no call of $node"; exit 1; }
# Without the define, each unstable header refuses with an error that names it.
for header in once_advanced.h once_sliced.h once_math.h once_cluster.h; do
  [ -e "$PREFIX/include/$header" ] || continue
  if printf '#include <%s>\n' "$header" | cc -fsyntax-only $cflags -x c - 2> "$PREFIX/error"; then
    echo "$header compiles without ONCE_USE_UNSTABLE_API"; exit 1
  fi
  grep -q 'define ONCE_USE_UNSTABLE_API' "$PREFIX/error" ||
    { echo "$header refuses without saying why:"; cat "$PREFIX/error"; exit 1; }
done
# What libonce.so exports is checked by tests/rules/exports.sh (lib.exports_are_the_headers_calls).
printf 'a\na\nb\n' | "$PREFIX/bin/once" | cmp - <(printf 'a\nb\n')
# The manual page has an entry (an item tag: the line after .TP) for every long option
# `once --help` lists (the list is read from --help, so an option added there without
# a manual entry fails here), and groff renders it without a warning.
man_page="$PREFIX/share/man/man1/once.1"
options=$("$PREFIX/bin/once" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' |
          grep -oE -- '--[a-z0-9-]+')
[ -n "$options" ] || { echo "no options found in once --help"; exit 1; }
# The item tags of the OPTIONS section, with \- (how the source spells a hyphen, a
# hyphen-minus on every output device), font changes and quotes made plain.
tags=$(awk '/^\.SH/ { in_options = $2 == "OPTIONS" }
            in_options && previous ~ /^\.TP/ { print } { previous = $0 }' "$man_page" |
       sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/"//g')
missing=""
for option in $options; do
  grep -qE -- "(^|[ ,])$option([ =[]|\$)" <<< "$tags" || missing="$missing $option"
done
[ -z "$missing" ] || { echo "once.1 does not document:$missing"; exit 1; }
if command -v groff > /dev/null; then
  warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$man_page" 2>&1)
  [ -z "$warnings" ] || { echo "groff warns on once.1:"; echo "$warnings"; exit 1; }
  # Rendered (no hyphenation, no overstriking), each option reads as typed.
  rendered=$(groff -man -Tascii -rHY=0 -P-c "$man_page" | sed 's/.\x08//g')
  for option in $options; do
    grep -qE -- "(^|[^a-z-])$option([^a-z-]|\$)" <<< "$rendered" || missing="$missing $option"
  done
  [ -z "$missing" ] || { echo "once.1 as rendered does not show:$missing"; exit 1; }
else
  echo "groff not found: once.1 not rendered (make deps installs groff-base)"
fi
echo "install ok"
