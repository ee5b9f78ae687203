"""Loading once.so into Debian's redis-server."""
from server import Server


def test_module_loads_by_name():
    with Server() as s:
        mods = s.client().module_list()
        names = [m[b"name"] if b"name" in m else m["name"] for m in mods]
        assert b"once" in names or "once" in names, mods
        assert "once" in s.log() and "loaded" in s.log(), s.log()


def test_module_exports_only_its_entry_point():
    import os
    import subprocess
    from server import module_path
    out = subprocess.run(["nm", "-D", "--defined-only", module_path()],
                         capture_output=True, text=True, check=True).stdout
    exported = sorted(line.split()[-1] for line in out.splitlines()
                      if line.split()[-2] in ("T", "D", "B"))
    assert "RedisModule_OnLoad" in exported, exported
    assert not [n for n in exported if n.startswith("once_")], exported
    if not os.environ.get("ONCE_MODULE_PRELOAD"):
        # (The sanitizer build adds the instrumentation's own symbols.)
        assert exported == ["RedisModule_OnLoad"], exported
