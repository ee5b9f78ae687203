#!/usr/bin/env bash
# `make install` puts a usable library, header, pkg-config file and binary under a
# prefix: install the build tree into a scratch prefix, build a program against it with
# pkg-config (static and shared), and run both and the installed `once`.
# Usage: install_test.sh BUILD_DIR
set -eu
BUILD=$1
PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/once-install.XXXXXX")
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null
libdir=$(ls -d "$PREFIX"/lib*/ | head -n 1)
for f in include/once.h bin/once; do
  [ -e "$PREFIX/$f" ] || { echo "missing $f"; exit 1; }
done
ls "$libdir"/libonce.a "$libdir"/libonce.so "$libdir"/pkgconfig/once.pc > /dev/null
cat > "$PREFIX/example.c" <<'C'
#include <once.h>
#include <stdio.h>
int main(void)
{
    once_filter *f = NULL;
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
cc -o "$PREFIX/example-shared" "$PREFIX/example.c" $(pkg-config --cflags --libs once)
LD_LIBRARY_PATH="$libdir" "$PREFIX/example-shared"
cc -o "$PREFIX/example-static" "$PREFIX/example.c" $(pkg-config --cflags once) \
   "$libdir/libonce.a" $(pkg-config --static --libs-only-l once | sed "s/-lonce//")
"$PREFIX/example-static"
# Only the public API is exported from the shared library.
if nm -D --defined-only "$libdir/libonce.so" | awk '{print $3}' | grep -v '^once_' | grep -v '^_' | grep -q .; then
  echo "libonce.so exports symbols outside the once_ namespace:"
  nm -D --defined-only "$libdir/libonce.so" | awk '{print $3}' | grep -v '^once_'
  exit 1
fi
printf 'a\na\nb\n' | "$PREFIX/bin/once" | cmp - <(printf 'a\nb\n')
echo "install ok"
