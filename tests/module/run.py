"""Run one case of a module test file: run.py FILE CASE.

Each `def test_*` of tests/module/test_*.py is its own CTest test (module.FILE.CASE,
registered from the source by tests/module/CMakeLists.txt, so the list is kept in one
place).  A case that draws random input takes its seed from ONCE_TEST_SEED (default
fixed); the seed is printed on failure so that the run can be replayed.
"""
import importlib.util
import os
import sys
import traceback


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: run.py FILE CASE")
    path, case = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("case_file", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, case, None)
    if fn is None or not case.startswith("test_"):
        sys.exit("%s has no case %s" % (path, case))
    try:
        fn()
    except Exception:
        traceback.print_exc()
        print("seed: ONCE_TEST_SEED=%s" % os.environ.get("ONCE_TEST_SEED", "(default)"))
        sys.exit(1)
    print("ok", case)


if __name__ == "__main__":
    main()
