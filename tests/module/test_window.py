"""ONCE.*: windowed dedup by count and by time, on virtual clocks (AT), never sleeping.

The module's answers are checked against the library's on the same stream, through the
`once` command line tool built beside the module (ONCE_CLI): same filter, same seed,
same event times, so every decision must match, false positives included.
"""
import os
import random
import shutil
import subprocess
import tempfile
import time

from checks import err, wait_synced
from resp import Connection
from server import AOF_COMMANDS, Server

SEED = int(os.environ.get("ONCE_TEST_SEED", "20261123"))


def once_cli():
    path = os.environ.get("ONCE_CLI")
    if not path or not os.path.exists(path):
        raise RuntimeError("ONCE_CLI must name the built once program")
    return path


def stream(n, domain, rng):
    """Keys with repeats near and far: a Zipf-like mix of hot and cold keys."""
    return ["key-%d" % min(int(rng.paretovariate(1.1)) - 1 + rng.randrange(3), domain)
            if rng.random() < 0.5 else "key-%d" % rng.randrange(domain) for _ in range(n)]


def module_delivers(r, key, items, times=None):
    """ONCE.ADD each item (AT its time), in batches; the indexes delivered."""
    delivered = []
    p = r.pipeline(transaction=False)
    for i, item in enumerate(items):
        if times is None:
            p.execute_command("ONCE.ADD", key, item)
        else:
            p.execute_command("ONCE.ADD", key, item, "AT", times[i])
    for i, answer in enumerate(p.execute()):
        assert answer in (0, 1), answer
        if answer == 1:
            delivered.append(i)
    return delivered


def cli_delivers(options, lines):
    out = subprocess.run([once_cli()] + options, input="".join(l + "\n" for l in lines),
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_count_windows_decide_as_the_library():
    rng = random.Random(SEED)
    items = stream(20000, 4000, rng)
    with Server() as s:
        r = s.client()
        for name in ("apbf", "apbbf"):
            for refresh in (False, True):
                key = "%s-%d" % (name, refresh)
                r.execute_command("ONCE.RESERVE", key, "WINDOW", 700, "ERROR", "0.01",
                                  "FILTER", name, "SEED", 99, *(["REFRESH"] if refresh else []))
                got = [items[i] for i in module_delivers(r, key, items)]
                want = cli_delivers(["--window", "700", "--error", "0.01", "--filter", name,
                                     "--seed", "99"] + (["--refresh"] if refresh else []),
                                    items)
                assert got == want, (name, refresh, len(got), len(want))
                assert 0 < len(got) < len(items)


def test_time_windows_decide_as_the_library():
    rng = random.Random(SEED + 1)
    items = stream(15000, 3000, rng)
    times, t = [], 1_700_000_000_000
    for _ in items:
        t += rng.randrange(0, 8)
        # Some events arrive late, a few far late: they count at the window's clock.
        times.append(t - (rng.randrange(0, 3000) if rng.random() < 0.1 else 0))
    with Server() as s:
        r = s.client()
        for name in ("tagged", "tlbf", "timer"):
            key = "w-" + name
            r.execute_command("ONCE.RESERVE", key, "SPAN", 20000, "ERROR", "0.01",
                              "FILTER", name, "CAPACITY", 5000, "SEED", 5)
            got = [items[i] for i in module_delivers(r, key, items, times)]
            lines = ["%s\t%d" % (k, tm) for k, tm in zip(items, times)]
            # A key's window is one piece: so is the CLI's with --shards 1 (its default
            # for a time window is shards, whose false positives fall on other keys).
            want = [l.split("\t")[0] for l in cli_delivers(
                ["--span", "20000ms", "--error", "0.01", "--filter", name, "--capacity", "5000",
                 "--shards", "1", "--seed", "5", "--field", "1", "--time-field", "2",
                 "--time-format", "epoch_ms"], lines)]
            assert got == want, (name, len(got), len(want))
            assert 0 < len(got) < len(items)


def test_no_false_negatives_inside_a_count_window_and_expiry_after():
    with Server() as s:
        r = s.client()
        w = 1000
        r.execute_command("ONCE.RESERVE", "c", "WINDOW", w, "ERROR", "0.001", "SEED", 3)
        assert r.execute_command("ONCE.ADD", "c", "first") == 1
        # Inside the window: w - 1 more deliveries, and "first" is a duplicate throughout.
        for i in range(w - 1):
            r.execute_command("ONCE.ADD", "c", "n%d" % i)
            if i % 97 == 0:
                assert r.execute_command("ONCE.EXISTS", "c", "first") == 1
        assert r.execute_command("ONCE.EXISTS", "c", "first") == 1
        slack = dict(zip(*[iter(r.execute_command("ONCE.INFO", "c"))] * 2))[b"Slack"]
        # Past window + slack, the old keys are forgotten (up to false positives).
        r.execute_command("ONCE.MADD", "c", *["m%d" % i for i in range(w + slack + 10)])
        old = ["n%d" % i for i in range(w - 1)] + ["first"]
        still = sum(r.execute_command("ONCE.MEXISTS", "c", *old))
        assert still <= 0.001 * len(old) + 5 * (0.001 * len(old)) ** 0.5 + 2, still
        # A forgotten key is delivered again.
        assert r.execute_command("ONCE.ADD", "c", "first") == 1


def test_time_window_holds_for_its_span_and_forgets_after():
    with Server() as s:
        r = s.client()
        span = 60_000
        for name in ("tagged", "tlbf", "timer"):
            key = "t-" + name
            r.execute_command("ONCE.RESERVE", key, "SPAN", span, "FILTER", name, "ERROR",
                              "0.001", "CAPACITY", 2000, "SEED", 8)
            t0 = 10_000_000
            keys = ["k%d" % i for i in range(2000)]
            assert r.execute_command("ONCE.MADD", key, "AT", t0, *keys) == [1] * 2000
            # Inside the span, repeats are duplicates at every moment, even late ones.
            for dt in (0, 1, span // 2, span - 1):
                assert r.execute_command("ONCE.MEXISTS", key, "AT", t0 + dt, *keys) == [1] * 2000
            assert r.execute_command("ONCE.ADD", key, "k5", "AT", t0 + span - 1) == 0
            info = r.execute_command("ONCE.INFO", key)
            fields = dict(zip(info[::2], info[1::2]))
            assert (fields[b"Format"], fields[b"Probe"]) == (2, b"mixed")
            slack = fields[b"Slack"]
            after = t0 + span + slack + 1
            # Past span + slack: forgotten (a query changes nothing: ask twice).
            for _ in range(2):
                still = sum(r.execute_command("ONCE.MEXISTS", key, "AT", after, *keys))
                assert still <= 0.001 * 2000 + 5 * (0.001 * 2000) ** 0.5 + 2, (name, still)
            assert r.execute_command("ONCE.ADD", key, "k7", "AT", after) == 1


def test_a_sparse_window_pays_per_event_not_per_capacity():
    # A tagged window of CAPACITY 10M, its clock moved a pass or more by every ONCE.ADD
    # (a quiet feed, a replay of events far apart): each write sweeps the buckets its
    # table logged, not its 2.5M buckets.  300 such writes once took 2.5 s (a whole pass
    # each); the bound here is far above what they take now (docs/BENCHMARKS.md), and
    # the window still keeps each key for its span.
    with Server() as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "w", "SPAN", 10000, "CAPACITY", 10000000)
        t = 1700000000000
        r.execute_command("ONCE.ADD", "w", "first", "AT", t)
        started = time.monotonic()
        for i in range(300):
            t += 8400 if i % 7 else 30000  # ten ticks (a pass), or past the span
            assert r.execute_command("ONCE.ADD", "w", "k%d" % i, "AT", t) == 1
            assert r.execute_command("ONCE.ADD", "w", "k%d" % i, "AT", t + 9999) == 0
        took = time.monotonic() - started
        assert took < 1.0, took
        # A tick past its span the last key is forgotten, but as a false positive (the
        # default ERROR, 1%, over the few keys alive): none of the others either.
        forgotten = [r.execute_command("ONCE.EXISTS", "w", "k%d" % i, "AT", t + 11000)
                     for i in range(200, 300)]
        assert sum(forgotten) <= 5, forgotten


def test_queries_never_change_a_window():
    with Server() as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "t", "SPAN", 1000, "SEED", 1)
        r.execute_command("ONCE.MADD", "t", "AT", 5000, "a", "b")
        before = r.execute_command("ONCE.SCANDUMP", "t", 0)
        r.execute_command("ONCE.MEXISTS", "t", "AT", 9000, "a", "b", "c")
        r.execute_command("ONCE.EXISTS", "t", "a", "AT", 5500)
        r.execute_command("ONCE.CARD", "t", "AT", 90000)
        r.execute_command("ONCE.INFO", "t")
        assert r.execute_command("ONCE.SCANDUMP", "t", 0) == before
        assert r.execute_command("ONCE.EXISTS", "t", "a", "AT", 5999) == 1


def test_clock_rules_late_events_and_jumps():
    with Server() as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "t", "SPAN", 1000, "MAXJUMP", 3600000, "SEED", 2)
        assert r.execute_command("ONCE.ADD", "t", "a", "AT", 10_000_000) == 1
        # Late (a clock that went backwards): tested and remembered at the clock.
        assert r.execute_command("ONCE.ADD", "t", "b", "AT", 5) == 1
        assert r.execute_command("ONCE.ADD", "t", "b", "AT", 10_000_999) == 0
        # Too far ahead: refused, nothing changes.
        before = r.execute_command("ONCE.SCANDUMP", "t", 0)
        clock = 10_000_999
        assert "event time refused" in err(r, "ONCE.ADD", "t", "c", "AT", clock + 3600001)
        assert "event time refused" in err(r, "ONCE.MADD", "t", "AT", clock + 3600001, "c")
        assert r.execute_command("ONCE.SCANDUMP", "t", 0) == before
        info = r.execute_command("ONCE.INFO", "t")
        assert dict(zip(info[::2], info[1::2]))[b"Clock"] == clock
        assert r.execute_command("ONCE.ADD", "t", "c", "AT", clock + 3600000) == 1
        # Without AT: the server's clock (milliseconds since 1970), far ahead of 1970.
        r.execute_command("ONCE.RESERVE", "now", "SPAN", 60000, "SEED", 2)
        assert r.execute_command("ONCE.ADD", "now", "x") == 1
        assert r.execute_command("ONCE.ADD", "now", "x") == 0
        info = r.execute_command("ONCE.INFO", "now")
        assert dict(zip(info[::2], info[1::2]))[b"Clock"] > 1_600_000_000_000


def test_server_clock_is_not_bounded_by_maxjump():
    with Server() as s:
        r = s.client()
        # A window on the server's clock, idle for longer than its MAXJUMP: the next
        # event on the server's clock is taken (that time has really passed).
        r.execute_command("ONCE.RESERVE", "idle", "SPAN", 1000, "MAXJUMP", 10, "CLOCK",
                          "server", "SEED", 1)
        assert r.execute_command("ONCE.ADD", "idle", "a") == 1
        time.sleep(0.05)  # past MAXJUMP on the server's own clock
        assert r.execute_command("ONCE.ADD", "idle", "b") == 1
        assert r.execute_command("ONCE.ADD", "idle", "b") == 0
        # A producer's time is still bounded by it, and the bound was kept.
        r.execute_command("ONCE.RESERVE", "events", "SPAN", 1000, "MAXJUMP", 1000, "SEED", 1)
        assert r.execute_command("ONCE.ADD", "events", "a", "AT", 5000) == 1
        assert "event time refused" in err(r, "ONCE.ADD", "events", "b", "AT", 6001)
        assert r.execute_command("ONCE.ADD", "events", "b", "AT", 6000) == 1

def test_errors_and_missing_keys():
    with Server() as s:
        r = s.client()
        r.set("str", "v")
        r.execute_command("BF.ADD", "bloom", "a")
        r.execute_command("ONCE.RESERVE", "w", "WINDOW", 100)
        cases = [
            (("ONCE.ADD", "missing", "a"), "not found: create the window with ONCE.RESERVE "
                                           "(or set once.default-span)"),
            (("ONCE.RESERVE", "x", "ERROR", "0.01"),
             "give WINDOW n (the last n keys) or SPAN ms (the last ms milliseconds)"),
            (("ONCE.RESERVE", "x", "WINDOW", 10, "SPAN", 10),
             "give WINDOW n (the last n keys) or SPAN ms (the last ms milliseconds)"),
            (("ONCE.RESERVE", "x", "WINDOW", 0), "bad window: a count of keys in [1, 2^40]"),
            (("ONCE.RESERVE", "x", "WINDOW", "ten"), "bad window: a count of keys in [1, 2^40]"),
            (("ONCE.RESERVE", "x", "SPAN", -5), "bad span: a positive number of milliseconds"),
            (("ONCE.RESERVE", "x", "WINDOW", 10, "FILTER", "tlbf"),
             "the filter keeps a time window: give SPAN, or FILTER apbf or apbbf"),
            (("ONCE.RESERVE", "x", "SPAN", 10, "FILTER", "apbf"),
             "the filter keeps a count window: give WINDOW, or FILTER tagged, tlbf or timer"),
            (("ONCE.RESERVE", "x", "SPAN", 10, "FILTER", "blocked"),
             "bad filter: apbf, apbbf, tagged, tlbf or timer"),
            (("ONCE.RESERVE", "x", "SPAN", 10, "FILTER", "timer", "LEVEL", 1),
             "LEVEL does not apply to this filter"),
            (("ONCE.RESERVE", "x", "WINDOW", 10, "CAPACITY", 5),
             "CAPACITY, MAXJUMP and CLOCK apply to time windows (SPAN)"),
            (("ONCE.RESERVE", "x", "WINDOW", 10, "ERROR", 1), "(0 < error rate range < 1)"),
            (("ONCE.RESERVE", "x", "WINDOW", 10, "LEVEL", 9), "bad level: an integer in [0, 8]"),
            (("ONCE.RESERVE", "x", "WINDOW", 10, "BOGUS", 1), "unknown argument received"),
            (("ONCE.RESERVE", "x", "SPAN", 10, "ERROR"), "an option lacks its value"),
            (("ONCE.RESERVE", "x", "WINDOW"),
             "wrong number of arguments for 'once.reserve' command"),
            (("ONCE.RESERVE", "w", "WINDOW", 10), "item exists"),
            (("ONCE.RESERVE", "bloom", "WINDOW", 10),
             "WRONGTYPE Operation against a key holding the wrong kind of value"),
            (("ONCE.ADD", "w", "a", "AT", -1), "bad time: AT takes milliseconds in [0, 2^63)"),
            (("ONCE.ADD", "w", "a", "WHEN", 1), "unknown argument received"),
            (("ONCE.ADD", "w", "a", "AT"), "wrong number of arguments for 'once.add' command"),
            (("ONCE.MADD", "w", "AT", 5), "wrong number of arguments for 'once.madd' command"),
            (("ONCE.INFO", "missing"), "not found"),
            (("ONCE.CARD", "w", "CONFIDENCE", 2), "confidence must be a number in (0, 1)"),
        ]
        for args, expected in cases:
            got = err(r, *args)
            assert got == expected, (args, got, expected)
        for args in (("ONCE.ADD", "str", "a"), ("ONCE.EXISTS", "bloom", "a"),
                     ("ONCE.MADD", "bloom", "a"), ("ONCE.INFO", "str"), ("ONCE.CARD", "bloom"),
                     ("BF.ADD", "w", "a"), ("BF.EXISTS", "w", "a")):
            assert err(r, *args).startswith("WRONGTYPE"), args
        assert r.exists("missing", "x") == 0
        assert r.execute_command("ONCE.EXISTS", "missing", "a") == 0
        assert r.execute_command("ONCE.CARD", "missing") == [b"0", b"0", b"0"]
        # A window's dump does not load as a Bloom filter's, nor the reverse.
        chunk = r.execute_command("ONCE.SCANDUMP", "w", 0)
        assert "another type" in err(r, "BF.LOADCHUNK", "b2", *chunk)
        assert r.exists("b2") == 0


def test_default_span_creates_on_add():
    with Server(module_args=["default-span", "60000", "initial-capacity", "500"]) as s:
        r = s.client()
        assert r.execute_command("ONCE.ADD", "auto", "a", "AT", 1000) == 1
        assert r.execute_command("ONCE.ADD", "auto", "a", "AT", 60999) == 0
        info = r.execute_command("ONCE.INFO", "auto")
        fields = dict(zip(info[::2], info[1::2]))
        assert fields[b"Filter"] == b"tagged" and fields[b"Span"] == 60000, fields


def test_resp3_info_and_booleans():
    with Server() as s, Connection(s.port, 3) as c:
        c.call("ONCE.RESERVE", "w", "WINDOW", 100)
        assert c.call("ONCE.ADD", "w", "a") == ("#", True)
        assert c.call("ONCE.MADD", "w", "a", "b") == ("*", [("#", False), ("#", True)])
        assert c.call("ONCE.EXISTS", "w", "b") == ("#", True)
        kind, info = c.call("ONCE.INFO", "w")
        assert kind == "%"
        fields = {k[1]: v for k, v in info}
        assert fields["Filter"] == ("+", "apbf") and fields["Window"] == (":", 100)
        assert fields["Clock"] == ("_", None) and fields["Error rate"][0] == ","
        kind, card = c.call("ONCE.CARD", "w")
        assert kind == "*" and [k for k, _ in card] == [",", ",", ","]


def test_card_counts_the_window():
    with Server() as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "t", "SPAN", 10000, "CAPACITY", 20000, "SEED", 4)
        for start in range(0, 10000, 1000):
            r.execute_command("ONCE.MADD", "t", "AT", 1000 + start,
                              *["k%d" % i for i in range(start, start + 1000)])
        est, low, high = (float(x) for x in r.execute_command("ONCE.CARD", "t", "AT", 10999,
                                                              "CONFIDENCE", "0.99"))
        assert low <= 10000 <= high, (est, low, high)
        # Later, the first half has left the window.
        est, low, high = (float(x) for x in r.execute_command("ONCE.CARD", "t", "AT", 16000))
        assert high < 9000 and est > 1000, (est, low, high)


def test_replica_gets_the_server_clock_and_seeds():
    with Server(fixed_seeds=False, module_args=["default-span", "3600000"]) as master:
        with master.replica(fixed_seeds=False,
                            module_args=["default-span", "3600000"]) as replica:
            m, rep = master.client(), replica.client()
            m.execute_command("ONCE.RESERVE", "tl", "SPAN", 5000)
            m.execute_command("ONCE.RESERVE", "tm", "SPAN", 5000, "FILTER", "timer")
            m.execute_command("ONCE.RESERVE", "c", "WINDOW", 300, "REFRESH")
            for i in range(300):
                for key in ("tl", "tm", "c"):
                    m.execute_command("ONCE.ADD", key, "k%d" % (i % 170))
                m.execute_command("ONCE.MADD", "auto", "x%d" % i, "y%d" % (i % 10))
            wait_synced(m, rep)
            for key in ("tl", "tm", "c", "auto"):
                assert (rep.execute_command("ONCE.SCANDUMP", key, 0)
                        == m.execute_command("ONCE.SCANDUMP", key, 0)), key
                assert (rep.execute_command("DEBUG", "DIGEST-VALUE", key)
                        == m.execute_command("DEBUG", "DIGEST-VALUE", key)), key


def test_windows_survive_reload_and_restart():
    with Server() as s:
        r = s.client()
        for name, shape in (("apbf", ["WINDOW", 500]), ("apbbf", ["WINDOW", 500]),
                            ("tagged", ["SPAN", 5000]), ("tlbf", ["SPAN", 5000]),
                            ("timer", ["SPAN", 5000])):
            r.execute_command("ONCE.RESERVE", name, *shape, "FILTER", name)
            r.execute_command("ONCE.MADD", name, "AT", 777, *["k%d" % i for i in range(800)])
        names = ("apbf", "apbbf", "tagged", "tlbf", "timer")
        before = {n: r.execute_command("ONCE.SCANDUMP", n, 0) for n in names}
        r.execute_command("DEBUG", "RELOAD")
        assert {n: r.execute_command("ONCE.SCANDUMP", n, 0) for n in names} == before
        r.save()
        s.restart()
        r = s.client()
        assert {n: r.execute_command("ONCE.SCANDUMP", n, 0) for n in names} == before
        for n in names:
            assert r.execute_command("ONCE.EXISTS", n, "k799", "AT", 778) == 1


def timer_answers(r, key, items, at):
    """ONCE.MADD of `items` at time `at`, 100 a command: how many were answered 0."""
    zeros = 0
    for i in range(0, len(items), 100):
        zeros += r.execute_command("ONCE.MADD", key, "AT", at, *items[i:i + 100]).count(0)
    return zeros


def test_timer_window_grows_past_its_capacity():
    """CAPACITY is a first guess: a timer window grows past it within its error rate;
    NONSCALING keeps the first size, whose rate then rises, and the log says so once
    (and SCALING, NONSCALING belong to the timer filter only)."""
    items = ["item-%d" % i for i in range(3000)]
    with Server() as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "grows", "SPAN", 3600000, "FILTER", "timer",
                          "CAPACITY", 100, "ERROR", 0.01)
        r.execute_command("ONCE.RESERVE", "said", "SPAN", 3600000, "FILTER", "timer",
                          "CAPACITY", 100, "ERROR", 0.01, "SCALING")
        r.execute_command("ONCE.RESERVE", "fixed", "SPAN", 3600000, "FILTER", "timer",
                          "CAPACITY", 100, "ERROR", 0.01, "NONSCALING")
        # 3,000 new items, 30 times the guess: about 30 false positives at 1%; 60 is
        # past four standard deviations.
        assert timer_answers(r, "grows", items, 1000) <= 60
        assert timer_answers(r, "said", items, 1000) <= 60
        assert timer_answers(r, "fixed", items, 1000) > 1000
        # The fixed one, and only it, is logged as overfull, once however many more come.
        timer_answers(r, "fixed", ["more-%d" % i for i in range(1000)], 2000)
        overfull = [line for line in s.log().splitlines() if "holds more than its" in line]
        assert len(overfull) == 1, overfull
        assert "key 'fixed' (timer, fixed size)" in overfull[0]
        assert "capacity of 100 keys" in overfull[0]
        for word in ("SCALING", "NONSCALING"):
            assert "apply to FILTER timer" in err(r, "ONCE.RESERVE", "t" + word, "SPAN", 1000,
                                                  word)
            assert "apply to FILTER timer" in err(r, "ONCE.RESERVE", "c" + word, "WINDOW", 10,
                                                  "FILTER", "apbf", word)


class ReplayedServer:
    """A server whose AOF holds `creation`, replayed at start (as an earlier version
    replicated it): the server, and its directory removed after."""

    def __init__(self, creation):
        self.creation = creation

    def __enter__(self):
        resp = "*%d\r\n" % len(self.creation) + "".join(
            "$%d\r\n%s\r\n" % (len(w), w) for w in self.creation)
        self.dir = tempfile.mkdtemp(prefix="once-aof-")
        os.mkdir(os.path.join(self.dir, "appendonlydir"))
        with open(os.path.join(self.dir, "appendonlydir", "appendonly.aof.1.incr.aof"), "w") as f:
            f.write(resp)
        with open(os.path.join(self.dir, "appendonlydir", "appendonly.aof.manifest"), "w") as f:
            f.write("file appendonly.aof.1.incr.aof seq 1 type i\n")
        try:
            self.server = Server(directory=self.dir, extra=["--appendonly", "yes"]).__enter__()
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        return self.server

    def __exit__(self, *exc):
        try:
            return self.server.__exit__(*exc)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def test_timer_creation_replayed_from_an_earlier_version_stays_fixed():
    """An AOF written before SCALING existed replicated a timer window's creation
    without it: replayed, the window is the fixed one it was, while the same creation
    from a client grows.  The replayed creation is built here as that version wrote
    it (every option, the seed it drew)."""
    creation = ["ONCE.RESERVE", "old", "SPAN", "3600000", "ERROR", "0.01", "FILTER", "timer",
                "CAPACITY", "100", "MAXJUMP", "86400000", "SEED", "7", "MAXMEMORY",
                "16777216"]
    with ReplayedServer(creation) as s:
        r = s.client()
        r.execute_command(*(["ONCE.RESERVE", "new"] + creation[2:]))
        items = ["item-%d" % i for i in range(3000)]
        assert timer_answers(r, "old", items, 1000) > 1000
        assert timer_answers(r, "new", items, 1000) <= 60


def test_time_window_creation_replayed_without_filter_stays_a_tlbf():
    """A time window created without FILTER is tagged; one whose replayed creation
    (AOF, master) says no FILTER was made by a version whose default was the TLBF, and
    is built as one, as is a creation that asks for a LEVEL."""
    creation = ["ONCE.RESERVE", "old", "SPAN", "60000", "ERROR", "0.01", "CAPACITY", "100"]
    with ReplayedServer(creation) as s:
        r = s.client()
        r.execute_command(*(["ONCE.RESERVE", "new"] + creation[2:]))
        r.execute_command(*(["ONCE.RESERVE", "leveled"] + creation[2:] + ["LEVEL", "1"]))

        def filter_of(key):
            info = r.execute_command("ONCE.INFO", key)
            return dict(zip(info[::2], info[1::2]))[b"Filter"]

        assert filter_of("old") == b"tlbf"
        assert filter_of("new") == b"tagged"
        assert filter_of("leveled") == b"tlbf"


def test_first_event_is_bounded_by_the_server_clock():
    """A window's first event has no clock before it to bound it: MAXJUMP bounds AT
    against the server's clock too, so one outlier cannot carry a new window decades
    ahead.  MAXJUMP 0 lifts both bounds; replayed commands were bounded where they ran."""
    with Server() as s:
        r = s.client()
        now = int(r.execute_command("TIME")[0]) * 1000
        day = 86400000
        r.execute_command("ONCE.RESERVE", "w", "SPAN", 10000, "SEED", 3)
        before = r.execute_command("ONCE.SCANDUMP", "w", 0)
        for command in (["ONCE.ADD", "w", "a", "AT", now + 2 * day],
                        ["ONCE.MADD", "w", "AT", now + 2 * day, "a", "b"]):
            assert "ahead of the server's clock" in err(r, *command)
        assert r.execute_command("ONCE.SCANDUMP", "w", 0) == before  # nothing taken
        assert r.execute_command("ONCE.ADD", "w", "a", "AT", now + day // 2) == 1
        r.execute_command("ONCE.RESERVE", "free", "SPAN", 10000, "MAXJUMP", 0, "SEED", 3)
        assert r.execute_command("ONCE.ADD", "free", "a", "AT", now + 3650 * day) == 1



def info_of(r, key):
    info = r.execute_command("ONCE.INFO", key)
    return dict(zip(info[::2], info[1::2]))


def test_one_clock_per_window():
    """A time window runs on event times (AT) or on the server's clock, fixed by
    ONCE.RESERVE's CLOCK or by its first write; a command on the other clock is refused
    and changes nothing, so one AT-less command cannot expire a window fed event times."""
    with Server(module_args=["default-span", "10000"]) as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "t", "SPAN", 10000, "SEED", 1)
        assert info_of(r, "t")[b"Clock source"] == b"first"
        assert r.execute_command("ONCE.ADD", "t", "a", "AT", 1000) == 1
        assert info_of(r, "t")[b"Clock source"] == b"event"
        before = r.execute_command("ONCE.SCANDUMP", "t", 0)
        for command in (["ONCE.ADD", "t", "b"], ["ONCE.EXISTS", "t", "a"],
                        ["ONCE.MADD", "t", "p", "q", "AT", "5"], ["ONCE.CARD", "t"]):
            assert err(r, *command).startswith("the window runs on event time: give AT ms"), command
        assert "ONCE.MADD key AT ms item" in err(r, "ONCE.MADD", "t", "p", "AT", "5")
        assert r.execute_command("ONCE.SCANDUMP", "t", 0) == before
        assert r.execute_command("ONCE.ADD", "t", "a", "AT", 1500) == 0  # still in its window
        # The server's clock, chosen at creation.
        r.execute_command("ONCE.RESERVE", "s", "SPAN", 10000, "CLOCK", "server", "SEED", 1)
        assert err(r, "ONCE.ADD", "s", "a", "AT", 5) == "the window runs on the server's clock: drop AT"
        assert r.execute_command("ONCE.ADD", "s", "a") == 1
        assert r.execute_command("ONCE.EXISTS", "s", "a") == 1
        # A window created by its first ADD takes that ADD's clock.
        assert r.execute_command("ONCE.ADD", "auto", "x", "AT", 5) == 1
        assert info_of(r, "auto")[b"Clock source"] == b"event"
        assert "event time" in err(r, "ONCE.ADD", "auto", "y")
        # ONCE.CLOCK fixes the clock of a window without one; the other is refused.
        r.execute_command("ONCE.RESERVE", "c", "SPAN", 10000, "SEED", 1)
        assert r.execute_command("ONCE.CLOCK", "c", "server") == b"OK"
        assert r.execute_command("ONCE.CLOCK", "c", "server") == b"OK"
        assert "server's clock" in err(r, "ONCE.CLOCK", "c", "event")
        assert "bad clock" in err(r, "ONCE.RESERVE", "b", "SPAN", 1000, "CLOCK", "sideways")
        assert "apply to time windows" in err(r, "ONCE.RESERVE", "b", "WINDOW", 10, "CLOCK",
                                              "event")
        r.execute_command("ONCE.RESERVE", "n", "WINDOW", 10)
        assert "count window has no clock" in err(r, "ONCE.CLOCK", "n", "event")
        assert err(r, "ONCE.CLOCK", "missing", "event").startswith("not found")


def test_clock_fixed_by_a_write_reaches_the_replica_and_the_aof():
    """The master replicates the clock a write fixes before the write (a write on the
    server's clock goes out with AT): the replica and the AOF hold the same bytes and
    refuse the same commands."""
    with Server(fixed_seeds=False, extra=AOF_COMMANDS) as master:
        m = master.client()
        with master.replica(fixed_seeds=False) as replica:
            rep = replica.client()
            m.execute_command("ONCE.RESERVE", "w", "SPAN", 60000)
            m.execute_command("ONCE.MADD", "w", "a", "b")
            m.execute_command("ONCE.RESERVE", "e", "SPAN", 60000)
            m.execute_command("ONCE.ADD", "e", "a", "AT", 77)
            wait_synced(m, rep)
            for key, source in (("w", b"server"), ("e", b"event")):
                assert info_of(rep, key)[b"Clock source"] == source
                assert (rep.execute_command("ONCE.SCANDUMP", key, 0)
                        == m.execute_command("ONCE.SCANDUMP", key, 0)), key
            dumps = {k: m.execute_command("ONCE.SCANDUMP", k, 0) for k in ("w", "e")}
        master.restart()
        m = master.client()
        for key in ("w", "e"):
            assert m.execute_command("ONCE.SCANDUMP", key, 0) == dumps[key], key
        assert "event time" in err(m, "ONCE.ADD", "e", "b")


def test_lag_judges_late_events_at_their_own_time_and_persists():
    """ONCE.RESERVE ... LAG ms: a late event within the lag is judged at its own time (a
    repeat 7 s after its key, arriving after the clock passed that key's span, is a
    duplicate; a key first seen late lives a span from its own time), the window answers
    as the library's with the same lag, INFO reports it, and it survives DEBUG RELOAD, a
    restart and the replica's copy, byte for byte."""
    with Server() as s:
        r = s.client()
        r.execute_command("ONCE.RESERVE", "lag", "SPAN", 12000, "LAG", 8000, "SEED", 5)
        r.execute_command("ONCE.RESERVE", "nolag", "SPAN", 12000, "SEED", 5)
        for key in ("lag", "nolag"):
            assert r.execute_command("ONCE.ADD", key, "A", "AT", 100000) == 1
            assert r.execute_command("ONCE.ADD", key, "Y", "AT", 113500) == 1
            assert r.execute_command("ONCE.ADD", key, "B", "AT", 110000) == 1
        assert r.execute_command("ONCE.ADD", "lag", "A", "AT", 107000) == 0
        assert r.execute_command("ONCE.ADD", "nolag", "A", "AT", 107000) == 1
        assert r.execute_command("ONCE.EXISTS", "lag", "B", "AT", 122999) == 1
        assert r.execute_command("ONCE.ADD", "lag", "B", "AT", 123000) == 1
        assert r.execute_command("ONCE.ADD", "nolag", "B", "AT", 123000) == 0
        assert info_of(r, "lag")[b"Lag"] == 8000
        assert info_of(r, "nolag")[b"Lag"] == 0
        assert "bad lag" in err(r, "ONCE.RESERVE", "x", "SPAN", 1000, "LAG", 2001)
        assert "LAG applies to the tagged" in err(r, "ONCE.RESERVE", "x", "SPAN", 1000, "LAG",
                                                  10, "FILTER", "tlbf")
        assert "LAG applies" in err(r, "ONCE.RESERVE", "x", "WINDOW", 10, "LAG", 10)
        assert "lacks its value" in err(r, "ONCE.RESERVE", "x", "SPAN", 1000, "LAG")
        # The library's answers with the same lag and seed, late events included.
        rng = random.Random(SEED)
        items = stream(6000, 1500, rng)
        times = [20000 + 4 * i - rng.randrange(3000) for i in range(len(items))]
        r.execute_command("ONCE.RESERVE", "cmp", "SPAN", 5000, "LAG", 3000, "SEED", 9,
                          "CAPACITY", 2000, "ERROR", "0.01")
        got = [items[i] for i in module_delivers(r, "cmp", items, times)]
        lines = ["%s\t%d" % (k, tm) for k, tm in zip(items, times)]
        want = [l.split("\t")[0] for l in cli_delivers(
            ["--span", "5000ms", "--lag", "3000ms", "--capacity", "2000", "--shards", "1",
             "--error", "0.01",
             "--seed", "9", "--field", "1", "--time-field", "2", "--time-format", "epoch_ms"],
            lines)]
        assert got == want, (len(got), len(want))
        assert 0 < len(got) < len(items)
        before = {k: r.execute_command("ONCE.SCANDUMP", k, 0) for k in ("lag", "cmp")}
        r.execute_command("DEBUG", "RELOAD")
        assert {k: r.execute_command("ONCE.SCANDUMP", k, 0) for k in ("lag", "cmp")} == before
        assert info_of(r, "lag")[b"Lag"] == 8000
        r.save()
        s.restart()
        r = s.client()
        assert {k: r.execute_command("ONCE.SCANDUMP", k, 0) for k in ("lag", "cmp")} == before
        assert info_of(r, "cmp")[b"Lag"] == 3000
        # still lagged: N, late at 115.5 s (clock 123 s), lives a span from its own tick
        assert r.execute_command("ONCE.ADD", "lag", "N", "AT", 115500) == 1
        assert r.execute_command("ONCE.EXISTS", "lag", "N", "AT", 127999) == 1
        assert r.execute_command("ONCE.EXISTS", "lag", "N", "AT", 128000) == 0
    with Server() as master, master.replica() as replica:
        m, rep = master.client(), replica.client()
        m.execute_command("ONCE.RESERVE", "t", "SPAN", 5000, "LAG", 2500)
        for i in range(500):
            m.execute_command("ONCE.ADD", "t", "k%d" % (i % 170), "AT", 10000 + 7 * i - i % 50 * 40)
        wait_synced(m, rep)
        assert (rep.execute_command("ONCE.SCANDUMP", "t", 0)
                == m.execute_command("ONCE.SCANDUMP", "t", 0))
        assert info_of(rep, "t")[b"Lag"] == 2500
