#!/usr/bin/env bash
# The Python package installs offline from the tree with Debian's pip, setuptools and
# python3-dev: `pip install --no-build-isolation ./python` (setup.py drives the tree's
# CMake) into a scratch target, then imported from outside the tree, it dedups.  The
# tree is copied first (its sources, not its builds), so the install's own build
# leaves nothing in the checkout.
# Usage: python_pip.sh SOURCE_DIR
set -eu
SOURCE=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/once-pip.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/tree"
for part in CMakeLists.txt lib programs module cluster python; do
  cp -r "$SOURCE/$part" "$WORK/tree/"
done
rm -rf "$WORK/tree/python/build" "$WORK/tree/python/once.egg-info"
/usr/bin/python3 -m pip install --no-build-isolation --no-deps --no-index --quiet \
  --target "$WORK/site" "$WORK/tree/python" > "$WORK/pip.log" 2>&1 ||
  { cat "$WORK/pip.log"; echo "pip install failed"; exit 1; }
cd "$WORK"
PYTHONPATH="$WORK/site" /usr/bin/python3 -c '
import once, sys
assert once.__file__.startswith(sys.argv[1]), once.__file__
assert list(once.Filter(seed=1).dedup(["a", "b", "a"])) == ["a", "b"]
w = once.Window(span="1m", time="event", seed=1)
assert w.add("k", at=100) and not w.add("k", at=130) and w.add("k", at=200)
print("installed", once.__version__)
' "$WORK/site"
