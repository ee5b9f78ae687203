"""Make the format-1 data that tests/module/test_format1.py checks later modules against.

This directory was made by running this script against the module built from commit
57e552f, the last whose saved format (lib/api/format.c) is version 1.  Every answer
recorded here is that module's, so the data must never be made again with a later
module: it is the promise that values saved by format 1 keep loading and answering
exactly as they did.  To make it again (only if the data is lost), from the top of the
repository:

    git worktree add ../once-format1 57e552f
    cmake -S ../once-format1 -B ../once-format1/build -DCMAKE_BUILD_TYPE=Release
    cmake --build ../once-format1/build --target once_module
    /usr/bin/python3 tests/module/data/format1/make.py \\
        ../once-format1/build/module/once.so tests/module/data/format1

(make.py MODULE OUTPUT_DIR: any paths.)  It takes about a second, and the same module
makes the same answers and chunks again; dump.rdb and the AOF differ in their order of
keys and the RDB's timestamp only.

It runs Debian's redis-server 7.0 through tests/module/server.py and writes:

  dump.rdb          a SAVE holding every key below, and `bf-pending`, a BF.LOADCHUNK
                    load in progress (the first of its two chunks);
  appendonlydir/    an AOF (appendonly yes, aof-use-rdb-preamble no) after BGREWRITEAOF:
                    the module's rewrite, one *.LOADCHUNK command a chunk (every key but
                    bf-pending, whose raw megabyte would not fit the size we keep here);
  dumps/KEY.bin     the DUMP payload of each key, bf-pending's included;
  chunks/KEY.N.bin  the SCANDUMP chunks of each key (BF., ONCE. or DBF.SCANDUMP);
  continued/KEY.N.bin  the SCANDUMP chunks of each key after its second batch of writes,
                    applied by the format-1 module to the value it loaded from dump.rdb;
  pending/rest.N.bin  the chunks that complete bf-pending;
  answers.json      per key: its type, the items queried, the answers at each time, the
                    CARD replies, the INFO reply, the chunks' iterators, the second batch
                    (commands and replies); for bf-pending, the answers and the SHA-256
                    of the SCANDUMP of the completed filter (a megabyte: not kept here).

Every filter is small and at an error near 0.01, so that the absent items queried meet
some false positives: those answers move with the probe positions.  (A TLBF of level 2
and an APBBF of level 3 stay far below their target rate, and meet few or none: their
present items, and the dumps after the second batch, are what hold them.)  Every creation
gives its SEED, and every ONCE.* command its time (AT), count windows included, so that
nothing depends on the server's clock or its random seeds.

Strings in answers.json (items, command words, bulk replies) are the bytes read as
Latin-1, so binary items (NUL bytes) survive JSON.
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile

import redis

# tests/module, whose helpers this script shares with the tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from checks import wait_for_rewrite  # noqa: E402
from replies import PREFIX, cards, info, norm, run  # noqa: E402
from server import Server  # noqa: E402

T0 = 1_700_000_000_000  # event times (ms) start here: a plausible Unix time
SPAN = 60_000


def bin_items(prefix, start, stop):
    """Binary items: NUL and high bytes around a number."""
    return [b"\x00" + prefix + b"\x00%d\xff" % i for i in range(start, stop)]


def items(prefix, start, stop):
    return [("%s%d" % (prefix, i)).encode() for i in range(start, stop)]


def absent(n=1000):
    """Items no key was given (no other item begins with z)."""
    return [b"z%d" % i for i in range(n)]


def with_repeats(fresh, every, back):
    """`fresh` with, after each `every`-th item, the item `back` places earlier: a
    stream with duplicates inside (and, for large `back`, outside) the window."""
    out = []
    for i, x in enumerate(fresh):
        out.append(x)
        if i % every == every - 1 and i >= back:
            out.append(fresh[i - back])
    return out


def chunked(words, n):
    return [words[i:i + n] for i in range(0, len(words), n)]


def timed_batches(key, stream, start, step, sizes):
    """ONCE.MADD commands giving `stream` in batches `step` ms apart from `start`, of the
    sizes in `sizes` in turn (the last one repeated), and the time of the last batch.
    Traffic spread over time, as a TLBF sizes its slices for the rate it sees."""
    cmds, at, pos = [], start, 0
    while pos < len(stream):
        n = sizes[min(len(cmds), len(sizes) - 1)]
        cmds.append(["ONCE.MADD", key, "AT", at] + stream[pos:pos + n])
        pos += n
        at += step
    return cmds, at - step


# ------------------------------------------------------------------ the keys
#
# Each key: its type (bf, once or dbf), the commands that make it, the items queried
# afterwards, the times of the queries (ONCE.* only), and the second batch of writes.


def bf_keys():
    keys = {}
    grown = items("g", 0, 1500)
    keys["bf-grown"] = dict(
        type="bf",
        make=[["BF.RESERVE", "bf-grown", "0.01", "100", "EXPANSION", "2", "SEED", "101"]]
        + [["BF.MADD", "bf-grown"] + part for part in chunked(grown, 250)],
        query=grown + absent(),
        more=[["BF.MADD", "bf-grown"] + items("g", 1500, 2100) + grown[:40],
              ["BF.ADD", "bf-grown", "g-single"]])
    fixed = bin_items(b"f", 0, 800)
    keys["bf-fixed"] = dict(
        type="bf",
        make=[["BF.RESERVE", "bf-fixed", "0.01", "1000", "NONSCALING", "SEED", "102"]]
        + [["BF.MADD", "bf-fixed"] + part for part in chunked(fixed, 200)],
        query=fixed + absent(),
        # Past its capacity: the reply ends with the filter's "full" error.
        more=[["BF.MADD", "bf-fixed"] + bin_items(b"f", 800, 1100)])
    inserted = items("i", 0, 1000)
    keys["bf-insert"] = dict(
        type="bf",
        make=[["BF.INSERT", "bf-insert", "CAPACITY", "200", "ERROR", "0.02", "EXPANSION",
               "4", "SEED", "103", "ITEMS"] + inserted[:100]]
        + [["BF.ADD", "bf-insert", x] for x in inserted[100:150]]
        + [["BF.MADD", "bf-insert"] + part for part in chunked(inserted[150:], 300)],
        query=inserted + absent(),
        more=[["BF.INSERT", "bf-insert", "ITEMS"] + items("i", 1000, 1500)])
    return keys


def count_window_keys():
    keys = {}

    def window(key, create, stream, query, more):
        keys[key] = dict(
            type="once", times=[T0],
            make=[create] + [["ONCE.MADD", key, "AT", T0] + part
                             for part in chunked(stream, 300)],
            query=query + absent(),
            more=[["ONCE.MADD", key, "AT", T0] + part for part in chunked(more, 300)]
            + [["ONCE.ADD", key, more[-1], "AT", T0]])

    a = items("a", 0, 2500)
    window("once-apbf", ["ONCE.RESERVE", "once-apbf", "WINDOW", "1000", "ERROR", "0.01",
                         "SEED", "201"],
           with_repeats(a, 7, 5), a,
           with_repeats(items("a", 2500, 3400), 5, 300) + a[2400:2450])
    r = items("r", 0, 1500)
    window("once-apbf-refresh", ["ONCE.RESERVE", "once-apbf-refresh", "WINDOW", "500",
                                 "ERROR", "0.02", "LEVEL", "4", "REFRESH", "SEED", "202"],
           with_repeats(r, 3, 400), r,
           with_repeats(items("r", 1500, 2100), 2, 450))
    b = items("b", 0, 2500)
    window("once-apbbf", ["ONCE.RESERVE", "once-apbbf", "WINDOW", "1000", "ERROR", "0.01",
                          "FILTER", "apbbf", "SEED", "203"],
           with_repeats(b, 6, 900), b,
           with_repeats(items("b", 2500, 3300), 4, 700))
    c = bin_items(b"c", 0, 2000)
    window("once-apbbf-l3", ["ONCE.RESERVE", "once-apbbf-l3", "WINDOW", "800", "ERROR",
                             "0.01", "FILTER", "apbbf", "LEVEL", "3", "SEED", "204"],
           with_repeats(c, 9, 600), c,
           with_repeats(bin_items(b"c", 2000, 2700), 5, 500))
    return keys


def time_window_keys():
    """Time windows: a batch every second or half second over several spans, at rates
    that change (a TLBF adapts its slices to them), a late batch (before the clock: taken
    at the clock), single adds.  Queries before the clock, at it, half a span after it,
    and past the span and the slack."""
    keys = {}

    def window(key, create, base, stream, sizes, more, more_sizes, step=1000):
        batches, clock = timed_batches(key, stream, T0, step, sizes)
        make = [create] + batches
        make.append(["ONCE.MADD", key, "AT", clock - 25_000] + stream[:20])  # late
        make.append(["ONCE.ADD", key, stream[-1], "AT", clock])
        span = int(create[create.index("SPAN") + 1])
        cont, last = timed_batches(key, more, clock + step, step, more_sizes)
        cont.append(["ONCE.ADD", key, more[0], "AT", last + step])
        keys[key] = dict(type="once", make=make, query=base + absent(),
                         times=[clock - span // 2, clock, clock + span // 2,
                                clock + span + span // 2, clock + 3 * span],
                         more=cont)

    t = items("t", 0, 1600)
    window("once-tlbf", ["ONCE.RESERVE", "once-tlbf", "SPAN", str(SPAN), "ERROR", "0.01",
                         "CAPACITY", "300", "SEED", "301"],
           t, with_repeats(t, 8, 120), [8] * 60 + [24] * 40 + [8],
           with_repeats(items("t", 1600, 2200), 8, 120), [6])
    l0 = bin_items(b"l", 0, 2000)
    window("once-tlbf-l0", ["ONCE.RESERVE", "once-tlbf-l0", "SPAN", str(SPAN), "ERROR",
                            "0.01", "CAPACITY", "600", "LEVEL", "0", "REFRESH",
                            "SEED", "302"],
           l0, with_repeats(l0, 4, 150), [10],
           with_repeats(bin_items(b"l", 2000, 2600), 4, 150), [10])
    m = items("m", 0, 2000)
    window("once-timer", ["ONCE.RESERVE", "once-timer", "SPAN", str(SPAN), "ERROR",
                          "0.01", "CAPACITY", "600", "FILTER", "timer", "SEED", "401"],
           m, with_repeats(m, 6, 200), [10],
           items("m", 2000, 2700), [10])
    n = items("n", 0, 1200)
    window("once-timer-refresh", ["ONCE.RESERVE", "once-timer-refresh", "SPAN", "30000",
                                  "ERROR", "0.05", "FILTER", "timer", "CAPACITY", "300",
                                  "MAXJUMP", "600000", "REFRESH", "SEED", "402"],
           n, with_repeats(n, 3, 100), [6],
           with_repeats(items("n", 1200, 1700), 3, 100), [6], step=500)
    return keys


def dbf_keys():
    keys = {}
    d = items("d", 0, 1000)
    keys["dbf-rows"] = dict(
        type="dbf",
        make=[["DBF.RESERVE", "dbf-rows", "0.01", "300", "SEED", "501"]]
        + [["DBF.MADD", "dbf-rows"] + part for part in chunked(d, 200)]
        + [["DBF.ADD", "dbf-rows", x] for x in d[:30]]  # counted twice
        + [["DBF.DEL", "dbf-rows", x] for x in d[0:300:3] + d[900:1000:4]],
        query=d + absent(),
        more=[["DBF.MADD", "dbf-rows"] + items("d", 1000, 1400)]
        + [["DBF.DEL", "dbf-rows", x] for x in d[1:200:5] + items("d", 1000, 1400)[::10]
           + absent()[:20]])
    e = bin_items(b"e", 0, 400)
    keys["dbf-one"] = dict(
        type="dbf",
        make=[["DBF.RESERVE", "dbf-one", "0.02", "500", "SEED", "502"],
              ["DBF.MADD", "dbf-one"] + e]
        + [["DBF.DEL", "dbf-one", x] for x in e[::4]],
        query=e + absent(),
        more=[["DBF.MADD", "dbf-one"] + bin_items(b"e", 400, 480)]
        + [["DBF.DEL", "dbf-one", x] for x in e[1::6] + absent()[:10]])
    return keys


def all_keys():
    keys = {}
    for part in (bf_keys(), count_window_keys(), time_window_keys(), dbf_keys()):
        keys.update(part)
    return keys


PENDING = "bf-pending"

# ----------------------------------------------------------------- replies


def text(words):
    """Command words as JSON strings."""
    return [w.decode("latin-1") if isinstance(w, bytes) else str(w) for w in words]


def scandump(r, kind, key):
    chunks, it = [], 0
    while True:
        it, data = r.execute_command(PREFIX[kind] + ".SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def answers(r, kind, key, query, times):
    """One string of 0/1 per query time (one for BF and DBF)."""
    out = []
    for t in times or [None]:
        at = ["AT", t] if t is not None else []
        got = r.execute_command(PREFIX[kind] + ".MEXISTS", key, *at, *query)
        out.append("".join("1" if v else "0" for v in got))
    return out


def state(r, kind, key, spec):
    return dict(answers=answers(r, kind, key, spec["query"], spec.get("times")),
                card=cards(r, kind, key, spec.get("times") or []), info=info(r, kind, key))


# ------------------------------------------------------------------ files


def write(out, rel, data):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return rel


def save_chunks(out, folder, stem, chunks):
    """Each chunk in its file: [[iterator, file], ...]."""
    return [[it, write(out, "%s/%s.%d.bin" % (folder, stem, n), data)]
            for n, (it, data) in enumerate(chunks)]


def compact_json(x, indent=""):
    """JSON with a line for each field, and lists of plain values on one line."""
    inner = indent + " "
    if isinstance(x, dict) and x:
        fields = [inner + json.dumps(k) + ": " + compact_json(x[k], inner) for k in sorted(x)]
        return "{\n" + ",\n".join(fields) + "\n" + indent + "}"
    if isinstance(x, list) and any(isinstance(v, (dict, list)) for v in x):
        return "[\n" + ",\n".join(inner + compact_json(v, inner) for v in x) + "\n" + indent + "]"
    return json.dumps(x)



def resp_commands(data):
    """The commands of an AOF file (RESP arrays of bulk strings)."""
    cmds, pos = [], 0
    while pos < len(data):
        assert data[pos:pos + 1] == b"*", data[pos:pos + 20]
        end = data.index(b"\r\n", pos)
        n, pos = int(data[pos + 1:end]), end + 2
        words = []
        for _ in range(n):
            end = data.index(b"\r\n", pos)
            size, pos = int(data[pos + 1:end]), end + 2
            words.append(data[pos:pos + size])
            pos += size + 2
        cmds.append(words)
    return cmds


def aof_base(directory):
    aof = os.path.join(directory, "appendonlydir")
    base = [f for f in os.listdir(aof) if ".base." in f]
    assert len(base) == 1, os.listdir(aof)
    with open(os.path.join(aof, base[0]), "rb") as f:
        return f.read()


# --------------------------------------------------------------- the steps

AOF = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]


def pending_source(server_cls):
    """A filter of a little more than the module's 1 MiB save chunk, cut in two by an AOF
    rewrite (SCANDUMP gives it whole): the chunks of a load in progress, and what the
    completed filter answers."""
    spec = dict(query=items("p", 0, 400) + absent())
    with server_cls(extra=AOF) as s:
        r = s.client()
        r.execute_command("BF.RESERVE", "source", "0.01", "850000", "NONSCALING", "SEED", "104")
        r.execute_command("BF.MADD", "source", *items("p", 0, 400))
        r.bgrewriteaof()
        wait_for_rewrite(r)
        chunks = [(int(w[2]), w[3]) for w in resp_commands(aof_base(s.dir))
                  if w[0] == b"BF.LOADCHUNK"]
        assert len(chunks) == 2, [len(c) for _, c in chunks]
        done = state(r, "bf", "source", spec)
        done["sha256"] = hashlib.sha256(
            b"".join(d for _, d in scandump(r, "bf", "source"))).hexdigest()
    return chunks, spec["query"], done


def make(server_cls, out):
    keys = all_keys()
    record = {"made_by": "once.so built from commit 57e552f (saved format 1), "
                         "redis-server 7.0.15",
              "keys": {}}
    chunks, pending_query, pending_done = pending_source(server_cls)

    with server_cls(extra=AOF) as s:
        r = s.client()
        for key, spec in keys.items():
            for cmd in spec["make"]:
                got = run(r, cmd)
                # A DBF.DEL may meet the multiple-address problem: refused, no change.
                assert cmd[0] == "DBF.DEL" or not isinstance(got, redis.ResponseError), (
                    cmd[:4], got)
        for key, spec in keys.items():
            kind = spec["type"]
            rec = dict(type=kind, query=text(spec["query"]), times=spec.get("times"))
            rec.update(state(r, kind, key, spec))
            rec["dump"] = write(out, "dumps/%s.bin" % key, r.dump(key))
            dump = scandump(r, kind, key)
            # The stream (past the 40-byte chunk header) is format 1's: magic, version 1.
            assert dump[0][1][40:46] == b"ONCE\x01\x00", "not the format-1 module"
            rec["chunks"] = save_chunks(out, "chunks", key, dump)
            record["keys"][key] = rec
        # A load in progress, saved as the chunks it holds.
        assert r.execute_command("BF.LOADCHUNK", PENDING, *chunks[0]) == b"OK"
        record["pending"] = dict(
            key=PENDING, type="bf", times=None, query=text(pending_query), dump=write(
                out, "dumps/%s.bin" % PENDING, r.dump(PENDING)),
            rest=save_chunks(out, "pending", "rest", chunks[1:]), **pending_done)
        assert r.save()
        shutil.copy(os.path.join(s.dir, "dump.rdb"), os.path.join(out, "dump.rdb"))
        # The AOF: the rewrite of every key but the megabyte of the load in progress.
        r.delete(PENDING)
        r.bgrewriteaof()
        wait_for_rewrite(r)
        base = aof_base(s.dir)
        loads = [w[1].decode() for w in resp_commands(base) if w[0].endswith(b".LOADCHUNK")]
        assert sorted(set(loads)) == sorted(keys), loads
        s.stop_process()  # the AOF complete on disk before it is copied
        shutil.copytree(os.path.join(s.dir, "appendonlydir"),
                        os.path.join(out, "appendonlydir"))

    # The second batch, applied by the format-1 module to what it loaded from the RDB.
    d = tempfile.mkdtemp(prefix="once-format1-")
    try:
        shutil.copy(os.path.join(out, "dump.rdb"), d)
        with server_cls(directory=d) as s:
            r = s.client()
            for key, spec in keys.items():
                rec = record["keys"][key]
                assert state(r, rec["type"], key, spec) == {
                    f: rec[f] for f in ("answers", "card", "info")}, key
                replies = [norm(run(r, cmd)) for cmd in spec["more"]]
                rec["more"] = dict(
                    commands=[text(cmd) for cmd in spec["more"]], replies=replies,
                    info=info(r, rec["type"], key),
                    chunks=save_chunks(out, "continued", key,
                                       scandump(r, rec["type"], key)))
    finally:
        shutil.rmtree(d, ignore_errors=True)

    with open(os.path.join(out, "answers.json"), "w") as f:
        f.write(compact_json(record) + "\n")
    return record


def summary(record):
    for key, rec in record["keys"].items():
        n_absent = sum(1 for q in rec["query"] if q.startswith("z"))
        fps = [a[-n_absent:].count("1") for a in rec["answers"]]
        print("%-20s false positives among %d absent: %s" % (key, n_absent, fps))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make.py PATH/TO/once.so OUTPUT_DIR")
    module, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.environ["ONCE_MODULE"] = module
    for name in ("dump.rdb", "answers.json"):
        if os.path.exists(os.path.join(out, name)):
            os.unlink(os.path.join(out, name))
    for name in ("appendonlydir", "dumps", "chunks", "continued", "pending"):
        shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    summary(make(Server, out))


if __name__ == "__main__":
    main()
