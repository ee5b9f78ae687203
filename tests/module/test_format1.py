"""Values saved by the format-1 module keep loading and answering exactly as before.

The saved format (lib/api/format.c) went from version 1 to version 2, and with it the
probe positions of most structures.  A value the format-1 module saved is a user's data:
it must enter a server through every path a value takes (an RDB loaded at startup, an
AOF replayed at startup, RESTORE of a DUMP payload, *.LOADCHUNK of SCANDUMP chunks),
answer every query as that module answered it, take later writes as that module took
them, and stay itself when it is dumped and loaded again.

data/format1/ holds what the module of commit 57e552f (the last of format 1) made and
answered: keys of every structure the module holds (BF scalable and NONSCALING; ONCE
apbf, apbbf, tlbf and timer, count and time windows; DBF with several rows and
deletes; binary items), a BF load in progress, and a second batch of writes with its
replies and the dumps after it.  data/format1/make.py made it and says how.  The absent
items queried meet false positives, which are what a wrong probe changes; the dumps
compared byte for byte catch what answers might miss.  Every ONCE.* command gives its
time (AT), so nothing here depends on the clock.
"""
import contextlib
import hashlib
import json
import os
import shutil
import tempfile

from checks import err, scandump, wait_for_rewrite
from replies import PREFIX, cards, info, norm, run
from server import AOF_COMMANDS, Server

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "format1")


def recorded():
    with open(os.path.join(DATA, "answers.json")) as f:
        return json.load(f)


def raw(word):
    """A recorded string as the bytes it stands for (answers.json keeps bytes as Latin-1,
    so that binary items survive JSON)."""
    return word.encode("latin-1")


def data_file(rel):
    with open(os.path.join(DATA, rel), "rb") as f:
        return f.read()


def chunks_of(entries):
    """Recorded chunks, [[iterator, file], ...], as SCANDUMP's [(iterator, data), ...]."""
    return [(it, data_file(rel)) for it, rel in entries]


@contextlib.contextmanager
def server_on(*names, extra=()):
    """A server started on a copy of files of DATA (dump.rdb, appendonlydir), which it
    loads at startup; the committed files are never written."""
    d = tempfile.mkdtemp(prefix="once-format1-")
    try:
        for name in names:
            src = os.path.join(DATA, name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(d, name))
            else:
                shutil.copy(src, d)
        with Server(directory=d, extra=extra) as s:
            yield s
    finally:
        shutil.rmtree(d, ignore_errors=True)


# What INFO reports of the running server rather than of the value: "Size" is the
# memory the module holds for it (once_bytes: its structs included), which follows the
# library's layout in memory, not what was saved.
NOT_SAVED = {"Size"}


def check_info(r, kind, key, expected):
    # Later versions may add fields; every recorded one of the value keeps its value,
    # and ONCE.INFO and DBF.INFO say the value is still format 1, placing keys with the
    # linear probe.  (BF.INFO keeps RedisBloom's five fields: a BF key's blocked layout
    # places keys alike in both formats.)
    got = info(r, kind, key)
    if kind != "bf":
        assert (got.get("Format"), got.get("Probe")) == (1, "linear"), \
            "%s: INFO says format %r, probe %r" % (key, got.get("Format"), got.get("Probe"))
    for field, value in expected.items():
        if field in NOT_SAVED:
            continue
        assert field in got, "%s: INFO lacks %r: %r" % (key, field, got)
        assert got[field] == value, "%s: INFO %r is %r, format 1 replied %r" % (
            key, field, got[field], value)


def check_answers(r, key, rec):
    """`key` answers every recorded query of `rec` as the format-1 module did, at each
    recorded time, and its CARD and INFO replies are the recorded ones."""
    kind = rec["type"]
    query = [raw(q) for q in rec["query"]]
    for t, expected in zip(rec["times"] or [None], rec["answers"]):
        at = ["AT", t] if t is not None else []
        got = "".join("1" if v else "0" for v in
                      r.execute_command(PREFIX[kind] + ".MEXISTS", key, *at, *query))
        if got != expected:
            wrong = [rec["query"][i] for i in range(len(got)) if got[i] != expected[i]]
            raise AssertionError("%s at %s: %d answers differ from format 1's, e.g. %r"
                                 % (key, t, len(wrong), wrong[:5]))
    assert cards(r, kind, key, rec["times"] or []) == rec["card"], key
    check_info(r, kind, key, rec["info"])


def load_chunks(r, kind, key, chunks):
    for it, data in chunks:
        assert r.execute_command(PREFIX[kind] + ".LOADCHUNK", key, it, data) == b"OK", key


def dump_of(r, kind, key):
    return scandump(r, key, PREFIX[kind] + ".SCANDUMP")



def check_every_key(r, rec, load=lambda r, key, k: None):
    """Each recorded key, loaded by `load(r, key, k)` (or already there, loaded at
    startup), answers as the format-1 module did."""
    for key, k in rec["keys"].items():
        load(r, key, k)
        check_answers(r, key, k)


def restore_dump(r, key, k):
    assert r.restore(key, 0, data_file(k["dump"]))


def load_scandump_chunks(r, key, k):
    load_chunks(r, k["type"], key, chunks_of(k["chunks"]))


def test_rdb_loads_at_startup():
    rec = recorded()
    with server_on("dump.rdb") as s:
        r = s.client()
        names = sorted(k.decode() for k in r.keys())
        assert names == sorted(list(rec["keys"]) + [rec["pending"]["key"]]), names
        check_every_key(r, rec)


def test_aof_replays_at_startup():
    # The AOF is the format-1 module's rewrite: its *.LOADCHUNK commands, replayed.
    rec = recorded()
    with server_on("appendonlydir", extra=AOF_COMMANDS) as s:
        r = s.client()
        assert sorted(k.decode() for k in r.keys()) == sorted(rec["keys"])
        check_every_key(r, rec)


def test_restore_of_dump_payloads():
    with Server() as s:
        check_every_key(s.client(), recorded(), restore_dump)


def test_loadchunk_of_scandump_chunks():
    with Server() as s:
        check_every_key(s.client(), recorded(), load_scandump_chunks)


@contextlib.contextmanager
def on_format1_rdb():
    """A server started on the format-1 module's RDB: the server, a client, and each
    recorded key as (key, its record, its type)."""
    rec = recorded()
    with server_on("dump.rdb") as s:
        yield s, s.client(), [(key, k, k["type"]) for key, k in rec["keys"].items()]


def apply_writes(r, name, more):
    """The recorded second batch on key `name`: the replies, each as recorded."""
    for cmd, expected in zip(more["commands"], more["replies"]):
        got = norm(run(r, [cmd[0], name] + [raw(w) for w in cmd[2:]]))
        if got != expected:
            raise AssertionError("%s %s %s: %r, format 1 replied %r"
                                 % (cmd[0], name, cmd[2:4], got, expected))


def test_writes_after_loading_match_format1():
    # Loaded by each path, a format-1 value takes the second batch of writes as the
    # format-1 module took them: the same replies, then the same bytes.
    with on_format1_rdb() as (s, r, keys):
        for key, k, kind in keys:
            restore_dump(r, key + ":restored", k)
            load_scandump_chunks(r, key + ":chunks", k)
            for name in (key, key + ":restored", key + ":chunks"):
                apply_writes(r, name, k["more"])
                assert dump_of(r, kind, name) == chunks_of(k["more"]["chunks"]), name
                check_info(r, kind, name, k["more"]["info"])


def test_dumps_of_loaded_values_stay_format1():
    # A loaded format-1 value dumps as it was saved, and every way the module under
    # test writes it out and reads it back (SCANDUMP and LOADCHUNK, DUMP and RESTORE,
    # its own RDB, its own AOF rewrite) keeps its answers.
    with on_format1_rdb() as (s, r, keys):
        for key, k, kind in keys:
            chunks = dump_of(r, kind, key)
            assert chunks == chunks_of(k["chunks"]), key
            load_chunks(r, kind, key + ":chunks", chunks)
            assert dump_of(r, kind, key + ":chunks") == chunks, key
            assert r.restore(key + ":restored", 0, r.dump(key))
        names = [(key + suffix, k) for key, k, _ in keys for suffix in ("", ":chunks", ":restored")]
        for name, k in names:
            check_answers(r, name, k)
        r.execute_command("DEBUG", "RELOAD")
        for name, k in names:
            check_answers(r, name, k)
        r.config_set("aof-use-rdb-preamble", "no")
        r.config_set("appendonly", "yes")  # the module's rewrite, from the values loaded
        wait_for_rewrite(r)
        s.restart(extra=AOF_COMMANDS)
        r = s.client()
        for name, k in names:
            check_answers(r, name, k)
            assert dump_of(r, k["type"], name) == chunks_of(k["chunks"]), name


def test_pending_load_resumes():
    # A load in progress saved by the format-1 module (its first chunk of two), from the
    # RDB and from its DUMP payload, completes with the rest of the format-1 dump.
    p = recorded()["pending"]
    key, rest = p["key"], chunks_of(p["rest"])
    with server_on("dump.rdb") as s:
        r = s.client()
        assert r.restore(key + ":restored", 0, data_file(p["dump"]))
        for name in (key, key + ":restored"):
            assert "load in progress" in err(r, "BF.EXISTS", name, "p1"), name
            load_chunks(r, "bf", name, rest)
            check_answers(r, name, p)
            whole = b"".join(data for _, data in dump_of(r, "bf", name))
            assert hashlib.sha256(whole).hexdigest() == p["sha256"], name
