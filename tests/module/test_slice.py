"""SLICE.*: one slice of a filter sliced over a cluster, run by packed requests.

The requests and answers are encoded here from the layout docs/CLUSTER.md and
lib/slice/wire.c describe, independently of the C encoder the cluster client uses."""
import random
import struct

from checks import err, scandump, wait_for_rewrite, wait_synced
from server import AOF_COMMANDS, Server

TEST, SET, TEST_AND_SET = 0, 1, 2


def encode(requests, timed=True, claims=None):
    """requests: (op, [positions], time_ms); claims: (claim, release) for each, or None."""
    flags = (1 if timed else 0) | (2 if claims else 0)
    out = [struct.pack("<BBI", 1, flags, len(requests))]
    for i, (op, positions, at) in enumerate(requests):
        out.append(struct.pack("<BB", op, len(positions)))
        if timed:
            out.append(struct.pack("<Q", at))
        if claims:
            out.append(struct.pack("<QQ", *claims[i]))
        out.append(struct.pack("<%dI" % len(positions), *positions))
    return b"".join(out)


def decode(reply, count, with_claims=False):
    """[(all_set, failure reason or 0)] for `count` requests (and claim_lost, when
    with_claims)."""
    version, flags, n, cells, cells_set, filters = struct.unpack_from("<BBIQQI", reply, 0)
    assert version == 1 and flags in (0, 1) and n == count
    assert 0 < cells and cells_set <= cells * filters and filters >= 1
    size = (count + 7) // 8
    bits = reply[26:26 + size]
    at = 26 + size
    (failed,) = struct.unpack_from("<I", reply, at)
    at += 4
    reasons = {}
    for _ in range(failed):
        index, reason = struct.unpack_from("<IB", reply, at)
        reasons[index] = reason
        at += 5
    lost = reply[at:at + size] if flags & 1 else bytes(size)
    at += size if flags & 1 else 0
    assert at == len(reply)
    bit = lambda b, i: (b[i // 8] >> (i % 8)) & 1 == 1
    if with_claims:
        return [(bit(bits, i), reasons.get(i, 0), bit(lost, i)) for i in range(count)]
    return [(bit(bits, i), reasons.get(i, 0)) for i in range(count)]


def run(r, key, requests):
    return decode(r.execute_command("SLICE.RUN", key, encode(requests)), len(requests))


def info(r, key):
    flat = r.execute_command("SLICE.INFO", key)
    return dict(zip(flat[::2], flat[1::2]))


def test_runs_requests_and_answers_a_bit_each():
    with Server() as s:
        r = s.client()
        assert r.execute_command("SLICE.CREATE", "s", "BITS", 1024) == b"OK"
        answers = run(r, "s", [(TEST, [1, 2, 3], 0), (TEST_AND_SET, [1, 2, 3], 0),
                               (TEST, [1, 2, 3], 0), (TEST_AND_SET, [1, 2, 3], 0),
                               (SET, [9], 0), (TEST, [9, 1], 0), (TEST, [9, 10], 0),
                               (TEST, [], 0)])
        assert answers == [(False, 0), (False, 0), (True, 0), (True, 0), (False, 0),
                           (True, 0), (False, 0), (True, 0)]
        i = info(r, "s")
        assert i[b"Bits"] == 1024 and i[b"Cells set"] == 4 and i[b"Growth"] == b"none"
        assert i[b"Number of items inserted"] == 2
        # Made again alike: OK, nothing lost.  Another geometry: refused by name.
        assert r.execute_command("SLICE.CREATE", "s", "BITS", 1024) == b"OK"
        assert run(r, "s", [(TEST, [1, 2, 3], 0)]) == [(True, 0)]
        assert "another geometry" in err(r, "SLICE.CREATE", "s", "BITS", 2048)
        r.set("plain", "x")
        assert "WRONGTYPE" in err(r, "SLICE.CREATE", "plain", "BITS", 64)
        assert "WRONGTYPE" in err(r, "SLICE.RUN", "plain", encode([]))


def test_a_missing_slice_is_an_error_of_its_own():
    # A node restarted empty must read as a failed slice, not as one holding nothing.
    with Server() as s:
        r = s.client()
        assert err(r, "SLICE.RUN", "gone", encode([(TEST, [1], 0)])).startswith("NOSLICE")
        assert err(r, "SLICE.INFO", "gone").startswith("NOSLICE")
        assert r.exists("gone") == 0  # a run never creates a slice


def test_bad_requests_change_nothing():
    with Server() as s:
        r = s.client()
        r.execute_command("SLICE.CREATE", "s", "BITS", 128, "WINDOW", 1000)
        before = scandump(r, "s", "SLICE.SCANDUMP")
        good = encode([(SET, [1, 2], 50)])
        for bad in (b"", good[:-1], good + b"\0", b"\x02" + good[1:], good[:6] + b"\x03" + good[7:],
                    struct.pack("<BBI", 1, 1, 0xffffffff)):
            assert "malformed" in err(r, "SLICE.RUN", "s", bad)
        # A position past the slice, in a batch whose first request is good: nothing runs.
        assert "out of range" in err(r, "SLICE.RUN", "s",
                                     encode([(SET, [1, 2], 50), (SET, [128], 50)]))
        assert scandump(r, "s", "SLICE.SCANDUMP") == before
        for args in (("BITS", 100), ("BITS", 0), ("WINDOW", 5), ("BITS", 64, "GROWTH", "DENSITY"),
                     ("BITS", 64, "MAXDENSITY", "1.5", "GROWTH", "DENSITY"),
                     ("BITS", 64, "COLOR", "red"), ("BITS",), ("BITS", 2 ** 32 + 64)):
            assert err(r, "SLICE.CREATE", "t", *args)  # redis-py drops the "ERR " prefix
        assert r.exists("t") == 0
        assert "wrong number" in err(r, "SLICE.RUN", "s")


def test_windows_forget_at_the_producers_time_and_refuse_far_jumps():
    with Server() as s:
        r = s.client()
        r.execute_command("SLICE.CREATE", "w", "BITS", 256, "WINDOW", 1000, "MAXJUMP", 60000)
        run(r, "w", [(TEST_AND_SET, [5, 6], 10000)])
        # Alive while t_u < 10000 + 1000, whatever order the producers' requests come in.
        assert run(r, "w", [(TEST, [5, 6], 10999), (TEST, [5, 6], 11000),
                            (TEST, [5, 6], 9500)]) == [(True, 0), (False, 0), (True, 0)]
        # A set more than MAXJUMP ahead is refused alone (reason 2: its time).
        answers = run(r, "w", [(SET, [7], 10000 + 60001), (TEST_AND_SET, [8], 10500)])
        assert answers == [(False, 2), (False, 0)]
        assert info(r, "w")[b"Clock"] == 10500


def test_claims_go_to_the_first_asker_until_released():
    # Racing producers: the first request to claim a value holds it; the next loses
    # until a release (docs/CLUSTER.md, "Racing producers").
    with Server() as s:
        r = s.client()
        r.execute_command("SLICE.CREATE", "c", "BITS", 64)
        reqs = [(TEST, [1], 0), (TEST, [2], 0), (TEST, [3], 0)]
        reply = r.execute_command("SLICE.RUN", "c", encode(reqs, claims=[(7, 0), (7, 0), (8, 0)]))
        assert [lost for _, _, lost in decode(reply, 3, True)] == [False, True, False]
        reply = r.execute_command("SLICE.RUN", "c", encode(reqs[:2], claims=[(0, 7), (7, 0)]))
        assert [lost for _, _, lost in decode(reply, 2, True)] == [False, False]
        reply = r.execute_command("SLICE.RUN", "c", encode(reqs[:1], claims=[(8, 0)]))
        assert decode(reply, 1, True)[0][2] is True


def test_slices_survive_reload_aof_dump_and_a_replica():
    with Server(extra=AOF_COMMANDS) as s:
        r = s.client()
        rng = random.Random(7)
        r.execute_command("SLICE.CREATE", "b", "BITS", 4096)
        r.execute_command("SLICE.CREATE", "g", "BITS", 512, "WINDOW", 5000, "GROWTH",
                          "CARDINALITY", "MAXDENSITY", "0.3")
        stored = [[rng.randrange(512) for _ in range(4)] for _ in range(600)]
        for start in range(0, len(stored), 100):
            batch = [(TEST_AND_SET, p, 1000 + 5 * (start + i))
                     for i, p in enumerate(stored[start:start + 100])]
            run(r, "b", batch)
            run(r, "g", batch)
        assert info(r, "g")[b"Sub-filters"] > 1
        probe = [(TEST, p, 4000) for p in stored] + \
                [(TEST, [rng.randrange(4096) for _ in range(4)], 4000) for _ in range(300)]
        probe_g = [(op, [x % 512 for x in p], t) for op, p, t in probe]
        want = (run(r, "b", probe), run(r, "g", probe_g))
        assert sum(a for a, _ in want[0][:600]) == 600  # no false negative
        dumps = {k: scandump(r, k, "SLICE.SCANDUMP") for k in ("b", "g")}

        def same():
            assert (run(r, "b", probe), run(r, "g", probe_g)) == want
            for k in ("b", "g"):
                assert scandump(r, k, "SLICE.SCANDUMP") == dumps[k]

        r.execute_command("DEBUG", "RELOAD")
        same()
        r.execute_command("BGREWRITEAOF")
        wait_for_rewrite(r)
        s.restart()
        r = s.client()
        same()
        payload = r.dump("g")
        r.restore("g2", 0, payload)
        assert scandump(r, "g2", "SLICE.SCANDUMP") == dumps["g"]
        for it, data in dumps["b"]:
            r.execute_command("SLICE.LOADCHUNK", "b2", it, data)
        assert run(r, "b2", probe) == want[0]
        with s.replica() as replica:
            rep = replica.client()
            run(r, "b", [(SET, [4095], 9000)])
            wait_synced(r, rep)
            for k in ("b", "g", "g2", "b2"):
                assert scandump(rep, k, "SLICE.SCANDUMP") == scandump(r, k, "SLICE.SCANDUMP")


# Whole slices (once_sliced.h, "Whole slices"): a filter of its own, fed digests.

def encode_events(events, timed=True):
    """events: (lo, hi, time_ms): a SLICE.TADD message (slice/wire.c, version 2)."""
    out = [struct.pack("<BBI", 2, 1 if timed else 0, len(events))]
    for lo, hi, at in events:
        out.append(struct.pack("<QQ", lo, hi))
        if timed:
            out.append(struct.pack("<Q", at))
    return b"".join(out)


def decode_verdicts(reply, count):
    """(bytes, items, [(seen, failure reason or 0)])."""
    version, flags, n, size, items = struct.unpack_from("<BBIQQ", reply, 0)
    assert version == 2 and flags == 0 and n == count
    width = (count + 7) // 8
    bits = reply[22:22 + width]
    (failed,) = struct.unpack_from("<I", reply, 22 + width)
    at = 26 + width
    reasons = {}
    for _ in range(failed):
        index, reason = struct.unpack_from("<IB", reply, at)
        reasons[index] = reason
        at += 5
    assert at == len(reply)
    seen = [(bits[i // 8] >> (i % 8)) & 1 == 1 for i in range(count)]
    return size, items, [(seen[i], reasons.get(i, 0)) for i in range(count)]


def tadd(r, key, events):
    return decode_verdicts(r.execute_command("SLICE.TADD", key, encode_events(events)),
                           len(events))


def digests(rng, n):
    return [(rng.getrandbits(64), rng.getrandbits(64)) for _ in range(n)]


def test_whole_slice_test_and_adds_digests_at_their_times():
    rng = random.Random(11)
    with Server() as s:
        r = s.client()
        assert r.execute_command("SLICE.RESERVE", "w", "FILTER", "tagged", "CAPACITY", 10000,
                                 "ERROR", "0.001", "SEED", 5, "SPAN", 60000) == b"OK"
        keys = digests(rng, 2000)
        size, items, answers = tadd(r, "w", [(lo, hi, 1000 + i) for i, (lo, hi) in enumerate(keys)])
        assert items == 2000 and size > 0
        new = sum(1 for seen, _ in answers if not seen)
        assert new >= 2000 - 10  # fresh digests: false positives at the rate at most
        # Repeats inside the span: every one a duplicate (no false negative); past it: new.
        _, _, inside = tadd(r, "w", [(lo, hi, 50000) for lo, hi in keys])
        assert all(seen for seen, _ in inside)
        _, _, past = tadd(r, "w", [(lo, hi, 200000) for lo, hi in keys[:500]])
        assert sum(1 for seen, _ in past if not seen) >= 495
        # A repeat within one batch is the batch's own duplicate.
        lo, hi = digests(rng, 1)[0]
        _, _, twice = tadd(r, "w", [(lo, hi, 200001), (lo, hi, 200002)])
        assert [seen for seen, _ in twice] == [False, True]
        i = dict(zip(*[iter(r.execute_command("SLICE.INFO", "w"))] * 2))
        assert i[b"Filter"] == b"tagged" and i[b"Span"] == 60000 and i[b"Capacity"] == 10000
        assert i[b"Clock"] == 200002
        # Made again alike: OK; otherwise refused, naming what differs.
        assert r.execute_command("SLICE.RESERVE", "w", "FILTER", "tagged", "CAPACITY", 10000,
                                 "ERROR", "0.001", "SEED", 5, "SPAN", 60000) == b"OK"
        assert "another structure" in err(r, "SLICE.RESERVE", "w", "FILTER", "tagged",
                                          "CAPACITY", 20000, "ERROR", "0.001", "SEED", 5,
                                          "SPAN", 60000)
        # All time: a scalable slice, no times.
        assert r.execute_command("SLICE.RESERVE", "a", "FILTER", "scalable", "CAPACITY", 1000,
                                 "ERROR", "0.01", "SEED", 5) == b"OK"
        message = encode_events([(lo, hi, 0) for lo, hi in keys[:300]] * 2, timed=False)
        _, items, answers = decode_verdicts(r.execute_command("SLICE.TADD", "a", message), 600)
        assert items <= 300 and all(seen for seen, _ in answers[300:])


def test_whole_slice_with_a_lag_judges_late_events_at_their_own_time():
    # Producers behind each other in event time: a tagged slice with LAG judges an event
    # up to LAG behind its clock at its own time; without, at the clock.
    rng = random.Random(14)
    with Server() as s:
        r = s.client()
        for key, lag in (("lagged", ["LAG", 10000]), ("plain", [])):
            assert r.execute_command("SLICE.RESERVE", key, "FILTER", "tagged", "CAPACITY", 5000,
                                     "ERROR", "0.001", "SEED", 5, "SPAN", 60000, *lag) == b"OK"
        keys, ahead = digests(rng, 1000), digests(rng, 1000)
        for key in ("lagged", "plain"):
            tadd(r, key, [(lo, hi, 1000) for lo, hi in keys])
            tadd(r, key, [(lo, hi, 65000) for lo, hi in ahead])  # another producer, ahead
        # 54 s after their delivery, 10 s behind the clock: repeats, with the lag.
        _, _, late = tadd(r, "lagged", [(lo, hi, 55000) for lo, hi in keys])
        assert all(seen for seen, _ in late)
        # Without it they are judged at the clock, 64 s after their delivery: new.
        _, _, at_clock = tadd(r, "plain", [(lo, hi, 55000) for lo, hi in keys])
        assert sum(1 for seen, _ in at_clock if not seen) >= 990
        i = dict(zip(*[iter(r.execute_command("SLICE.INFO", "lagged"))] * 2))
        assert i[b"Lag"] == 10000 and i[b"Clock"] == 65000
        assert dict(zip(*[iter(r.execute_command("SLICE.INFO", "plain"))] * 2))[b"Lag"] == 0
        # A slice exists with its lag: another is refused; LAG only for a tagged slice,
        # at most twice its span.
        assert "lag" in err(r, "SLICE.RESERVE", "lagged", "FILTER", "tagged", "CAPACITY", 5000,
                            "ERROR", "0.001", "SEED", 5, "SPAN", 60000, "LAG", 20000)
        assert "LAG" in err(r, "SLICE.RESERVE", "t", "FILTER", "timer", "CAPACITY", 10,
                            "ERROR", "0.01", "SEED", 1, "SPAN", 1000, "LAG", 10)
        assert "LAG" in err(r, "SLICE.RESERVE", "t", "FILTER", "tagged", "CAPACITY", 10,
                            "ERROR", "0.01", "SEED", 1, "SPAN", 1000, "LAG", 2001)
        assert "LAG" in err(r, "SLICE.RESERVE", "t", "FILTER", "tagged", "CAPACITY", 10,
                            "ERROR", "0.01", "SEED", 1, "SPAN", 1000, "LAG", "-1")
        assert r.exists("t") == 0


def test_whole_slice_stamp_moves_a_key_to_its_place_in_the_count():
    # A count window's slice is a tagged window on the producers' count (span N + 1):
    # a line is test-and-added where its producer knew the count, then SLICE.STAMP
    # moves it to its place, and it stays for N lines from there.  A replica follows.
    rng = random.Random(15)
    window = 100
    with Server() as s:
        r = s.client()
        assert r.execute_command("SLICE.RESERVE", "c", "FILTER", "tagged", "CAPACITY", 1000,
                                 "ERROR", "0.001", "SEED", 5, "SPAN", window + 1) == b"OK"
        stamped, left = digests(rng, 20), digests(rng, 20)
        _, items, answers = tadd(r, "c", [(lo, hi, 0) for lo, hi in stamped + left])
        assert items == 40 and not any(seen for seen, _ in answers)
        reply = r.execute_command("SLICE.STAMP", "c", encode_events(
            [(lo, hi, 50) for lo, hi in stamped]))
        _, items, answers = decode_verdicts(reply, 20)
        assert items == 40 and answers == [(False, 0)] * 20  # no item more, none refused
        others = digests(rng, window)
        tadd(r, "c", [(lo, hi, 51 + i) for i, (lo, hi) in enumerate(others)])
        # At the count 50 + N: the stamped lines are inside, those left at 0 gone.
        _, _, again = tadd(r, "c", [(lo, hi, 50 + window) for lo, hi in stamped + left])
        assert all(seen for seen, _ in again[:20])
        assert sum(1 for seen, _ in again[20:] if not seen) >= 19
        with s.replica() as replica:
            rep = replica.client()
            wait_synced(r, rep)
            r.execute_command("SLICE.STAMP", "c", encode_events([(1, 2, 400)]))
            wait_synced(r, rep)
            assert scandump(rep, "c", "SLICE.SCANDUMP") == scandump(r, "c", "SLICE.SCANDUMP")
        # Refused as SLICE.TADD refuses, the slice unchanged.
        before = scandump(r, "c", "SLICE.SCANDUMP")
        assert err(r, "SLICE.STAMP", "gone", encode_events([(1, 2, 5)])).startswith("NOSLICE")
        assert "malformed" in err(r, "SLICE.STAMP", "c", b"\x02\x01")
        assert "out of range" in err(r, "SLICE.STAMP", "c",
                                     encode_events([(1, 2, 500), (3, 4, 2 ** 63)]))
        r.execute_command("SLICE.CREATE", "cells", "BITS", 64)
        assert "SLICE.RUN" in err(r, "SLICE.STAMP", "cells", encode_events([(1, 2, 5)]))
        assert scandump(r, "c", "SLICE.SCANDUMP") == before


def test_whole_slice_refuses_what_it_cannot_run():
    rng = random.Random(12)
    with Server() as s:
        r = s.client()
        good = encode_events([(1, 2, 5)])
        assert err(r, "SLICE.TADD", "gone", good).startswith("NOSLICE")
        assert r.exists("gone") == 0
        r.execute_command("SLICE.RESERVE", "w", "FILTER", "tagged", "CAPACITY", 100, "ERROR",
                          "0.01", "SEED", 1, "SPAN", 1000)
        tadd(r, "w", [(lo, hi, 10) for lo, hi in digests(rng, 50)])
        before = scandump(r, "w", "SLICE.SCANDUMP")
        for bad in (b"", good[:-1], good + b"\0", b"\x01" + good[1:],
                    good[:1] + b"\x03" + good[2:], struct.pack("<BBI", 2, 1, 0xffffffff)):
            assert "malformed" in err(r, "SLICE.TADD", "w", bad)
        assert "out of range" in err(r, "SLICE.TADD", "w",
                                     encode_events([(1, 2, 10), (3, 4, 2 ** 63)]))
        assert scandump(r, "w", "SLICE.SCANDUMP") == before
        # Each command runs its own kind of slice.
        r.execute_command("SLICE.CREATE", "cells", "BITS", 64)
        assert "SLICE.RUN" in err(r, "SLICE.TADD", "cells", good)
        assert "SLICE.TADD" in err(r, "SLICE.RUN", "w", encode([(TEST, [1], 0)]))
        for args in (("FILTER", "apbf", "CAPACITY", 10, "ERROR", "0.01", "SEED", 1),
                     ("FILTER", "tagged", "CAPACITY", 10, "ERROR", "0.01", "SEED", 1),
                     ("FILTER", "blocked", "CAPACITY", 10, "ERROR", "0.01", "SEED", 1, "SPAN", 5),
                     ("FILTER", "blocked", "CAPACITY", 0, "ERROR", "0.01", "SEED", 1),
                     ("FILTER", "blocked", "CAPACITY", 10, "ERROR", "2", "SEED", 1),
                     ("FILTER", "blocked", "CAPACITY", 10, "ERROR", "0.01", "SEED", 1, "X", 1)):
            assert err(r, "SLICE.RESERVE", "t", *args)
        assert r.exists("t") == 0


def test_whole_slices_survive_reload_aof_and_a_replica():
    rng = random.Random(13)
    with Server(extra=AOF_COMMANDS) as s:
        r = s.client()
        r.execute_command("SLICE.RESERVE", "w", "FILTER", "tagged", "CAPACITY", 3000,
                          "ERROR", "0.001", "SEED", 9, "SPAN", 60000, "LAG", 5000)
        r.execute_command("SLICE.RESERVE", "a", "FILTER", "blocked", "CAPACITY", 3000,
                          "ERROR", "0.001", "SEED", 9)
        keys = digests(rng, 3000)
        for start in range(0, 3000, 500):
            batch = [(lo, hi, 1000 + start + i) for i, (lo, hi) in enumerate(keys[start:start + 500])]
            tadd(r, "w", batch)
            tadd(r, "a", batch)
        dumps = {k: scandump(r, k, "SLICE.SCANDUMP") for k in ("w", "a")}

        def same():
            for k in ("w", "a"):
                assert scandump(r, k, "SLICE.SCANDUMP") == dumps[k]

        r.execute_command("DEBUG", "RELOAD")
        same()
        r.execute_command("BGREWRITEAOF")
        wait_for_rewrite(r)
        s.restart()
        r = s.client()
        same()
        with s.replica() as replica:
            rep = replica.client()
            tadd(r, "w", [(lo, hi, 9000) for lo, hi in digests(rng, 100)])
            wait_synced(r, rep)
            for k in ("w", "a"):
                assert scandump(rep, k, "SLICE.SCANDUMP") == scandump(r, k, "SLICE.SCANDUMP")
