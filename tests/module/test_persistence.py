"""Every filter survives what a key must survive, byte for byte: SAVE and a restart, DEBUG
RELOAD, an AOF rewrite and a restart, COPY, RESTORE, a replica (full sync and the command
stream); corrupt RESTORE payloads are refused and the server keeps running.

"Byte for byte" is checked on the dumps (SCANDUMP), which hold every bit and counter of
a filter, and on DEBUG DIGEST-VALUE.
"""
import os
import shutil
import struct
import tempfile

import redis
import xxhash

from checks import err, scandump, wait_for_rewrite, wait_synced
from server import AOF_COMMANDS, Server


def fill(r):
    """Filters of every shape: grown, non-scaling, created by ADD and by INSERT, binary
    items, and a load in progress.  Returns the complete keys and the pending one."""
    r.execute_command("BF.RESERVE", "grown", "0.001", "100", "EXPANSION", "2")
    for start in range(0, 5000, 500):
        r.execute_command("BF.MADD", "grown", *["g%d" % i for i in range(start, start + 500)])
    r.execute_command("BF.RESERVE", "fixed", "0.01", "50", "NONSCALING")
    r.execute_command("BF.MADD", "fixed", *[b"\x00bin%d" % i for i in range(60)])
    r.execute_command("BF.ADD", "added", "one")
    r.execute_command("BF.INSERT", "inserted", "CAPACITY", "1000", "ERROR", "0.0001",
                      "ITEMS", "a", "b", "c")
    r.execute_command("BF.RESERVE", "large", "0.0001", "10000000")
    r.execute_command("BF.ADD", "large", "x")
    chunks = scandump(r, "large")
    assert len(chunks) >= 2
    r.execute_command("BF.LOADCHUNK", "pending", *chunks[0])
    return ["grown", "fixed", "added", "inserted", "large"], chunks


def state(r, keys):
    probe = ["g%d" % i for i in range(0, 6000, 13)] + ["a", "b", "x", "one", "zz"]
    return {k: (scandump(r, k), r.execute_command("BF.MEXISTS", k, *probe),
                r.execute_command("BF.INFO", k), digest(r, k)) for k in keys}


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)


def finish_pending(r, chunks, expect):
    for it, data in chunks[1:]:
        r.execute_command("BF.LOADCHUNK", "pending", it, data)
    assert scandump(r, "pending") == expect


def check_kept(s, reload, prepare=lambda r: None):
    """Fill the server `s` (then `prepare` it), and `reload(s, r, keys)`, which answers a
    client of the server that read the keys back: each holds what it held, byte for
    byte, and the load in progress finishes."""
    r = s.client()
    keys, chunks = fill(r)
    prepare(r)
    before = state(r, keys)
    r = reload(s, r, keys)
    assert state(r, keys) == before
    finish_pending(r, chunks, before["large"][0])


def save_and_restart(s, r, keys):
    assert r.save()
    s.restart()
    return s.client()


def debug_reload(s, r, keys):
    r.execute_command("DEBUG", "RELOAD")
    return r


def rewrite_the_aof(r):
    r.bgrewriteaof()
    wait_for_rewrite(r)
    r.execute_command("BF.ADD", "grown", "after-the-rewrite")


def restart_from_the_aof(s, r, keys):
    aof = os.path.join(s.dir, "appendonlydir")
    base = [f for f in os.listdir(aof) if ".base." in f]
    assert base and open(os.path.join(aof, base[0]), "rb").read().count(
        b"BF.LOADCHUNK") >= len(keys), base
    s.restart()
    return s.client()


def test_save_and_restart():
    with Server() as s:
        check_kept(s, save_and_restart)


def test_debug_reload():
    with Server() as s:
        check_kept(s, debug_reload)


def test_aof_rewrite_and_restart():
    # Without the RDB preamble the rewrite is the module's own: LOADCHUNK commands.
    with Server(extra=AOF_COMMANDS) as s:
        check_kept(s, restart_from_the_aof, prepare=rewrite_the_aof)


def test_copy_memory_usage_and_digest():
    with Server() as s:
        r = s.client()
        keys, chunks = fill(r)
        for k in keys:
            assert r.copy(k, k + ":copy")
            assert scandump(r, k + ":copy") == scandump(r, k)
            assert digest(r, k + ":copy") == digest(r, k)
            size = r.execute_command("BF.INFO", k, "SIZE")[0]
            assert r.memory_usage(k) >= size, (k, r.memory_usage(k), size)
        # The copy is its own filter.
        r.execute_command("BF.ADD", "grown:copy", "only-in-the-copy")
        assert r.execute_command("BF.EXISTS", "grown", "only-in-the-copy") == 0
        assert digest(r, "grown:copy") != digest(r, "grown")
        # A load in progress copies too, and both finish.
        assert r.copy("pending", "pending2")
        for it, data in chunks[1:]:
            r.execute_command("BF.LOADCHUNK", "pending2", it, data)
        assert scandump(r, "pending2") == scandump(r, "large")
        # The server's memory counts the filters (the library allocates through it).
        used = r.info("memory")["used_memory"]
        assert used > r.execute_command("BF.INFO", "large", "SIZE")[0]


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected), which ends every DUMP payload."""
    poly = 0x95AC9329AC4BC9B5
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc


def resealed(body):
    """A DUMP payload with `body` (value and RDB version) and a correct checksum."""
    return body + crc64(body).to_bytes(8, "little")


def test_restore_refuses_corrupt_payloads():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    with Server() as s:
        r = s.client()
        r.execute_command("BF.RESERVE", "f", "0.01", "1000")
        r.execute_command("BF.MADD", "f", "a", "b", "c")
        payload = r.dump("f")
        body = payload[:-8]
        assert resealed(body) == payload
        assert r.restore("g", 0, payload)
        assert scandump(r, "g") == scandump(r, "f")
        # Damaged anywhere (the checksum made right, so the module's loader sees it).
        refused = 0
        for at in range(1, len(body) - 2, max(1, (len(body) - 3) // 97)):
            bad = bytearray(body)
            bad[at] ^= 0x5A
            try:
                r.restore("h", 0, resealed(bytes(bad)))
            except redis.ResponseError:
                refused += 1
                assert r.exists("h") == 0
            else:
                # A flip inside a string's length prefix may still parse; whatever
                # loads must be a whole filter.
                r.execute_command("BF.INFO", "h")
                r.delete("h")
        assert refused > 90, refused
        # Truncated.
        for cut in (1, 10, len(body) // 2, len(body) - 3):
            try:
                r.restore("h", 0, resealed(body[:cut] + body[-2:]))
            except redis.ResponseError:
                pass
            else:
                raise AssertionError("a payload cut at %d restored" % cut)
        assert s.alive() and r.execute_command("BF.CARD", "f") == 3
        # Larger than once.max-memory: refused by RESTORE.
        r.execute_command("BF.RESERVE", "big", "0.001", "1000000")
        big = r.dump("big")
        r.config_set("once.max-memory", str(1 << 20))
        try:
            r.restore("big2", 0, big)
        except redis.ResponseError:
            pass
        else:
            raise AssertionError("a filter above the memory limit restored")
        assert r.exists("big2") == 0


def test_replica_holds_identical_filters():
    # Random seeds: the replica gets each filter's seed with its creation.
    with Server(fixed_seeds=False) as master:
        m = master.client()
        m.execute_command("BF.RESERVE", "before-sync", "0.01", "100")
        m.execute_command("BF.MADD", "before-sync", *["k%d" % i for i in range(500)])
        with master.replica(fixed_seeds=False) as replica:
            rep = replica.client()
            keys, chunks = fill(m)
            m.execute_command("BF.INSERT", "grown", "ITEMS", "late1", "late2")
            wait_synced(m, rep)
            keys.append("before-sync")
            assert state(rep, keys) == state(m, keys)
            assert digest(rep, "pending") == digest(m, "pending")
            for it, data in chunks[1:]:
                m.execute_command("BF.LOADCHUNK", "pending", it, data)
            wait_synced(m, rep)
            assert scandump(rep, "pending") == scandump(m, "pending")
            # Seeds were drawn: two filters made alike differ in their bytes.
            m.execute_command("BF.ADD", "twin1", "x")
            m.execute_command("BF.ADD", "twin2", "x")
            wait_synced(m, rep)
            assert scandump(m, "twin1") != scandump(m, "twin2")
            assert scandump(rep, "twin1") == scandump(m, "twin1")


def test_replica_follows_the_master_whatever_its_own_limit():
    # An object's memory limit (MAXMEMORY, else once.max-memory) travels with its
    # creation, so a replica with another once.max-memory stops growing a filter
    # exactly where the master does.
    with Server() as master:
        with master.replica(module_args=["max-memory", "8192"]) as replica:
            m, rep = master.client(), replica.client()
            m.execute_command("BF.RESERVE", "b", "0.01", "100", "MAXMEMORY", 32768)
            m.execute_command("DBF.RESERVE", "d", "0.01", "100", "MAXMEMORY", 32768)
            m.execute_command("ONCE.RESERVE", "w", "SPAN", 60000, "CAPACITY", 100,
                              "MAXMEMORY", 16384)
            refused = {}
            for i in range(0, 10000, 500):
                items = ["k%d" % j for j in range(i, i + 500)]
                for cmd, key, at in (("BF.MADD", "b", []), ("DBF.MADD", "d", []),
                                     ("ONCE.MADD", "w", ["AT", 1000 + 10 * i])):
                    try:  # refused whole at the memory limit
                        got = m.execute_command(cmd, key, *at, *items)
                    except redis.ResponseError as e:
                        got = [e]
                    if isinstance(got[-1], redis.ResponseError):
                        assert "memory limit" in str(got[-1])
                        refused[key] = True
            assert refused == {"b": True, "d": True, "w": True}, refused
            wait_synced(m, rep)
            for key, cmd in (("b", "BF.SCANDUMP"), ("d", "DBF.SCANDUMP"), ("w", "ONCE.SCANDUMP")):
                assert scandump(rep, key, cmd) == scandump(m, key, cmd), key
            # A creation above the replica's own limit is not refused there either.
            m.execute_command("BF.RESERVE", "big", "0.01", "10000")
            wait_synced(m, rep)
            assert scandump(rep, "big") == scandump(m, "big")
            # A limit above once.max-memory is refused where it is set.
            assert "above once.max-memory" in err(m, "BF.RESERVE", "x", "0.01", "100",
                                                  "MAXMEMORY", 1 << 40)


def test_aof_replay_keeps_filters_above_a_lowered_limit():
    with Server(extra=AOF_COMMANDS) as s:
        r = s.client()
        r.execute_command("BF.RESERVE", "big", "0.001", "1000000")
        r.execute_command("BF.MADD", "big", "a", "b")
        r.bgrewriteaof()
        wait_for_rewrite(r)
        before = scandump(r, "big")
        # The server comes back with a limit far below the filter's size: what the AOF
        # replays was taken before, and is kept.
        s.module_args += ["max-memory", "65536"]
        s.restart()
        r = s.client()
        assert r.config_get("once.max-memory") == {"once.max-memory": "65536"}
        assert scandump(r, "big") == before
        assert "memory limit" in err(r, "BF.RESERVE", "new", "0.001", "1000000")


# Every creation command with every option it has, and the dump command of its type.
# A creation is replicated (to replicas and the AOF) as the module builds it, with the
# options that decide the value's bytes; each must replay into the very same value.
CREATIONS = [
    (["BF.RESERVE", "bf", "0.001", "500", "EXPANSION", "4", "MAXMEMORY", "1000000"],
     "BF.SCANDUMP"),
    (["BF.RESERVE", "bfn", "0.01", "300", "NONSCALING", "SEED", "9"], "BF.SCANDUMP"),
    (["BF.INSERT", "bfi", "CAPACITY", "200", "ERROR", "0.02", "EXPANSION", "3",
      "MAXMEMORY", "500000", "ITEMS", "x"], "BF.SCANDUMP"),
    (["DBF.RESERVE", "dbf", "0.001", "1000"], "DBF.SCANDUMP"),
    (["DBF.RESERVE", "dbfs", "0.01", "200", "SEED", "5", "MAXMEMORY", "2000000"],
     "DBF.SCANDUMP"),
    (["ONCE.RESERVE", "apbf", "WINDOW", "1000", "ERROR", "0.001", "LEVEL", "3", "REFRESH",
      "MAXMEMORY", "3000000"], "ONCE.SCANDUMP"),
    (["ONCE.RESERVE", "apbbf", "WINDOW", "500", "FILTER", "apbbf", "SEED", "4"],
     "ONCE.SCANDUMP"),
    (["ONCE.RESERVE", "tlbf", "SPAN", "60000", "ERROR", "0.01", "CAPACITY", "800",
      "MAXJUMP", "1000", "LEVEL", "1", "MAXMEMORY", "4000000"], "ONCE.SCANDUMP"),
    (["ONCE.RESERVE", "tagged", "SPAN", "60000", "ERROR", "0.01", "CAPACITY", "300",
      "MAXJUMP", "1000", "MAXMEMORY", "4000000"], "ONCE.SCANDUMP"),
    (["ONCE.RESERVE", "timer", "SPAN", "5000", "FILTER", "timer", "NONSCALING",
      "CAPACITY", "300", "REFRESH"], "ONCE.SCANDUMP"),
    (["ONCE.RESERVE", "timerg", "SPAN", "5000", "FILTER", "timer", "CAPACITY", "300"],
     "ONCE.SCANDUMP"),
]


def test_every_creation_replays_from_the_aof_and_on_a_replica():
    """Each type reserved with every option, with random seeds: a replica holds the same
    bytes, and so does the master restarted from its AOF (commands only, no preamble).
    Only reserved, nothing added: the creation alone must carry everything."""
    with Server(fixed_seeds=False, extra=AOF_COMMANDS) as master:
        m = master.client()
        with master.replica(fixed_seeds=False) as replica:
            rep = replica.client()
            for command, _ in CREATIONS:
                m.execute_command(*command)
            wait_synced(m, rep)
            before = {c[1]: scandump(m, c[1], dump) for c, dump in CREATIONS}
            for key, dump in before.items():
                command = next(d for c, d in CREATIONS if c[1] == key)
                assert scandump(rep, key, command) == dump, key
        master.restart()
        m = master.client()
        for key, dump in before.items():
            command = next(d for c, d in CREATIONS if c[1] == key)
            assert m.exists(key), key
            assert scandump(m, key, command) == dump, key


def grow_until_refused(r, command, key, at=()):
    """MADD new items until one is refused: the error, or None after 2e6 items.  A
    command refused at the memory limit changed nothing (its error is the reply); one
    refused otherwise holds the error in its item's place."""
    for i in range(0, 2000000, 2000):
        try:
            got = r.execute_command(command, key, *at, *["n%d" % j for j in range(i, i + 2000)])
        except redis.ResponseError as e:
            return str(e)
        if isinstance(got[-1], redis.ResponseError):
            return str(got[-1])
    return None


def test_a_loaded_value_takes_the_servers_limit():
    """A dump carries its value's memory limit, which any client can edit: a value a
    client loads (LOADCHUNK, RESTORE) takes at most once.max-memory as its limit, and
    replicas get the limit it took (ONCE.MAXMEMORY after the load).  Made at a 64 MiB
    limit, loaded at 1 MiB: each stops growing at 1 MiB.  ONCE.MAXMEMORY changes a
    key's limit, within once.max-memory and not below what it holds."""
    small = 1 << 20
    with Server(module_args=["max-memory", str(64 << 20)]) as master:
        with master.replica() as replica:
            m, rep = master.client(), replica.client()
            m.execute_command("BF.RESERVE", "b", "0.01", "8", "EXPANSION", "4096",
                              "MAXMEMORY", 64 << 20)
            m.execute_command("DBF.RESERVE", "d", "0.01", "100", "MAXMEMORY", 64 << 20)
            m.execute_command("ONCE.RESERVE", "w", "SPAN", 600000, "FILTER", "timer",
                              "CAPACITY", "100", "MAXMEMORY", 64 << 20)
            kinds = (("b", "BF"), ("d", "DBF"), ("w", "ONCE"))
            dumps = {key: scandump(m, key, kind + ".SCANDUMP") for key, kind in kinds}
            payloads = {key: m.dump(key) for key, _ in kinds}
            m.config_set("once.max-memory", str(small))
            for key, kind in kinds:
                at = ["AT", 1000] if kind == "ONCE" else []
                for it, data in dumps[key]:
                    m.execute_command(kind + ".LOADCHUNK", "loaded-" + key, it, data)
                m.restore("restored-" + key, 0, payloads[key])
                for target in ("loaded-" + key, "restored-" + key):
                    refusal = grow_until_refused(m, kind + ".MADD", target, at)
                    assert refusal is not None and "memory limit" in refusal, (target, refusal)
                    assert m.memory_usage(target) <= small + 65536, target
            # Another limit for a loaded key; more than once.max-memory is refused, and
            # less than it holds.
            for it, data in dumps["b"]:
                m.execute_command("BF.LOADCHUNK", "given", it, data)
            assert m.execute_command("ONCE.MAXMEMORY", "given", 200000) == b"OK"
            assert "memory limit" in grow_until_refused(m, "BF.MADD", "given")
            assert m.memory_usage("given") <= 200000 + 65536
            assert "above once.max-memory" in err(m, "ONCE.MAXMEMORY", "given", 64 << 20)
            assert "more than that limit" in err(m, "ONCE.MAXMEMORY", "loaded-b", 8192)
            assert err(m, "ONCE.MAXMEMORY", "nothing", 8192) == "not found"
            m.execute_command("ONCE.RESERVE", "fixed", "WINDOW", "100")
            assert "fixed size" in err(m, "ONCE.MAXMEMORY", "fixed", 8192)
            assert m.execute_command("ONCE.MAXMEMORY", "loaded-w", small) == b"OK"
            # The replica holds what the master holds: the limit went with the load.
            wait_synced(m, rep)
            for key, kind in kinds:
                assert (scandump(rep, "loaded-" + key, kind + ".SCANDUMP")
                        == scandump(m, "loaded-" + key, kind + ".SCANDUMP")), key


CHUNK_HEADER = 40  # lib/api/format.c, "Chunks": the header before each body
CURSOR_OFFSET_BITS = 37


def with_limit(chunks, old, new):
    """A dump's chunks with its value's memory limit `old` (a word of the structure's
    parameters) changed to `new`, and every checksum made right again, as any client
    can: the stream's XXH3-64, each chunk's tag and XXH3-64, and the iterators."""
    stream = b"".join(data[CHUNK_HEADER:] for _, data in chunks)
    params = struct.unpack_from("<I", stream, 40)[0]
    words = [i for i in range(48, 48 + params, 8)
             if struct.unpack_from("<Q", stream, i)[0] == old]
    assert len(words) == 1, words
    edited = bytearray(stream[:-8])
    struct.pack_into("<Q", edited, words[0], new)
    checksum = xxhash.xxh3_64_intdigest(bytes(edited))
    edited += struct.pack("<Q", checksum)
    tag = checksum & 0xFFFF
    out, offset = [], 0
    for _, data in chunks:
        body = bytes(edited[offset:offset + len(data) - CHUNK_HEADER])
        header = bytearray(data[:CHUNK_HEADER])
        struct.pack_into("<I", header, 12, tag)
        struct.pack_into("<Q", header, 32, xxhash.xxh3_64_intdigest(bytes(header[:32]) + body))
        offset += len(body)
        out.append((tag << CURSOR_OFFSET_BITS | offset // 8, bytes(header) + body))
    assert offset == len(edited)
    return out


def test_a_loaded_limit_of_zero_is_not_none():
    """A dump edited to carry the limit 0, its checksums recomputed.  A BF value loaded
    by a client (LOADCHUNK, RESTORE) takes once.max-memory for it, not "no limit", and
    stops growing there; the RESTORE payload is the server's own DUMP of the edited
    value replayed from an AOF, where the saved limit is kept as it is.  DBF and window
    values never save 0 (their limit is always set), and refuse a dump that says it."""
    small, made = 1 << 20, 64 << 20
    with Server(module_args=["max-memory", str(made)]) as s:
        r = s.client()
        r.execute_command("BF.RESERVE", "b", "0.01", "8", "EXPANSION", "4096",
                          "MAXMEMORY", made)
        r.execute_command("DBF.RESERVE", "d", "0.01", "100", "MAXMEMORY", made)
        r.execute_command("ONCE.RESERVE", "w", "SPAN", 600000, "FILTER", "timer",
                          "CAPACITY", "100", "MAXMEMORY", made)
        edited = {key: with_limit(scandump(r, key, kind + ".SCANDUMP"), made, 0)
                  for key, kind in (("b", "BF"), ("d", "DBF"), ("w", "ONCE"))}
    d = tempfile.mkdtemp(prefix="once-aof-")
    try:
        os.mkdir(os.path.join(d, "appendonlydir"))
        with open(os.path.join(d, "appendonlydir", "appendonly.aof.1.incr.aof"), "wb") as f:
            for it, data in edited["b"]:
                words = [b"BF.LOADCHUNK", b"replayed", b"%d" % it, data]
                f.write(b"*%d\r\n" % len(words) + b"".join(
                    b"$%d\r\n%s\r\n" % (len(w), w) for w in words))
        with open(os.path.join(d, "appendonlydir", "appendonly.aof.manifest"), "w") as f:
            f.write("file appendonly.aof.1.incr.aof seq 1 type i\n")
        with Server(directory=d, module_args=["max-memory", str(small)],
                    extra=["--appendonly", "yes"]) as s:
            r = s.client()
            payload = r.dump("replayed")
            assert payload, "the AOF did not replay the edited load"
            for it, data in edited["b"]:
                r.execute_command("BF.LOADCHUNK", "loaded", it, data)
            r.restore("restored", 0, payload)
            for target in ("loaded", "restored"):
                refusal = grow_until_refused(r, "BF.MADD", target)
                assert refusal is not None and "memory limit" in refusal, (target, refusal)
                assert r.memory_usage(target) <= small + 65536, target
            for key, kind in (("d", "DBF"), ("w", "ONCE")):
                replies = []
                for it, data in edited[key]:
                    try:
                        replies.append(r.execute_command(kind + ".LOADCHUNK", key, it, data))
                    except redis.ResponseError as e:
                        replies.append(str(e))
                assert "corrupt" in replies[-1], (key, replies)
                assert not r.exists(key), key
    finally:
        shutil.rmtree(d, ignore_errors=True)


def dump_instructions(capacity):
    """Instructions (callgrind's count, deterministic) that DUMP of a filled timer window
    of `capacity` keys takes in the module's RDB save (the server's CRC of the payload
    is not counted): the server runs under callgrind, counting inside value_rdb_save
    only.  Also the window's size."""
    d = tempfile.mkdtemp(prefix="once-callgrind-")
    try:
        wrapper = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                   "--toggle-collect=value_rdb_save",
                   "--callgrind-out-file=" + os.path.join(d, "out.%p")]
        with Server(module_args=["max-memory", str(256 << 20)], wrapper=wrapper) as s:
            r = s.client()
            r.execute_command("ONCE.RESERVE", "w", "SPAN", 3600000, "FILTER", "timer",
                              "CAPACITY", capacity, "NONSCALING")
            for i in range(0, 4000, 1000):
                r.execute_command("ONCE.MADD", "w", "AT", 1000 + i,
                                  *["k%d" % j for j in range(i, i + 1000)])
            size = r.execute_command("ONCE.INFO", "w")[9]
            assert r.dump("w")
            pid = s.pid
        with open(os.path.join(d, "out.%d" % pid)) as f:
            totals = [line for line in f if line.startswith("totals:")]
        return int(totals[0].split()[1]), size
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_timer_windows_dump_is_linear_in_its_size():
    """The RDB save, DEBUG DIGEST-VALUE, DUMP and SCANDUMP of a timer window write it in
    chunks (1 MiB for the first three), and each chunk costs its own bytes, not a walk
    of every byte before it: a window four times larger, in four times as many chunks,
    costs about four times as much to dump, where a walk a chunk would cost up to
    sixteen times.  Counted by callgrind, which the sanitizers' runtimes do not run
    beside."""
    if os.environ.get("ONCE_MODULE_PRELOAD"):
        print("not under the sanitizers")
        return
    small, small_size = dump_instructions(250000)
    large, large_size = dump_instructions(1000000)
    assert 3 << 20 < small_size and 3.5 < large_size / small_size < 4.5, (small_size, large_size)
    ratio = large / small
    print("dump of %d bytes: %d instructions; of %d bytes: %d (%.2fx)"
          % (small_size, small, large_size, large, ratio))
    assert 3 < ratio < 5.5, ratio


def test_a_creation_the_server_cannot_hold_is_refused():
    """A creation (or growth) whose arrays would pass the server's maxmemory, or the
    machine's memory, is refused with an error naming the limit, before anything is
    allocated: the server stays up.  A large filter taken is not touched until keys
    reach its pages, so creating one does not commit its memory."""
    with Server(module_args=["max-memory", str(1 << 42)], extra=["--maxmemory", "256mb"]) as s:
        r = s.client()
        got = err(r, "BF.RESERVE", "huge", "0.001", "2000000000", "NONSCALING")
        assert "maxmemory" in got, got
        assert not r.exists("huge")
        assert r.info("memory")["used_memory"] < 256 << 20
        r.execute_command("BF.RESERVE", "fits", "0.01", "1000")
    with Server(module_args=["max-memory", str(1 << 42)]) as s:
        r = s.client()
        got = err(r, "ONCE.RESERVE", "w", "SPAN", 1000, "CAPACITY", 1 << 37)  # 370 GB
        assert "machine's memory" in got, got
        assert r.ping()
        # 512 MiB of filter, its pages untouched: resident memory stays far below.
        rss = r.info("memory")["used_memory_rss"]
        r.execute_command("BF.RESERVE", "big", "0.01", "400000000", "NONSCALING")
        assert r.memory_usage("big") > 400 << 20
        assert r.info("memory")["used_memory_rss"] - rss < 64 << 20
