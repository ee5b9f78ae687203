"""One filter sliced over a Redis Cluster, end to end: `once --cluster` producers over
real clusters of Debian's redis-server with the module on every node (cluster.py).

Every slicing delivers a stream's keys once, with false positives within the target;
vertical slicing answers as the in-process vertical filter of the same seed; producers
racing on one stream deliver each key at most once between them; a master killed
without replicas costs what the failure formulas say, and the producer goes on; with
replicas a producer holds through a failover and, with --wait, loses nothing; a slot
moved mid-stream costs nothing; a node restarted empty reads as failed slices.
"""
import json
import math
import os
import random
import select
import subprocess
import tempfile
import time

from cluster import Cluster
from failover import slice_keys, victim_of

ONCE = os.environ.get("ONCE_CLI")
SEED = int(os.environ.get("ONCE_TEST_SEED", "20261127"))


def binomial_bounds(n, p, sigmas=5.0):
    """[low, high] for a binomial(n, p) count, `sigmas` standard deviations out."""
    spread = sigmas * math.sqrt(n * p * (1 - p)) + 1
    return max(0.0, n * p - spread), n * p + spread


def once(cluster, key, *args, data=b"", timeout=240, expect=0):
    """Run `once --cluster` on `data`: (output lines, stats or stderr text)."""
    command = [ONCE, "--cluster", cluster.seeds()[0], "--key", key, *args]
    p = subprocess.run(command, input=data, capture_output=True, timeout=timeout)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == expect, (command, p.returncode, err)
    stats = None
    if "--stats=json" in args:
        stats = json.loads(err.strip().splitlines()[-1])
    return p.stdout.splitlines(), stats if stats is not None else err


def lines(keys):
    return b"".join(b"%s\n" % k for k in keys)


def keys_of(prefix, n):
    return [b"%s-%d" % (prefix.encode(), i) for i in range(n)]


def repeated_stream(keys, total, rng):
    """Every key once, in a random order, then repeats drawn at random."""
    first = list(keys)
    rng.shuffle(first)
    return first + [rng.choice(keys) for _ in range(total - len(keys))]


SLICINGS = [
    ("horizontal", ["--slicing", "horizontal", "--slices", "3"]),
    ("vertical", ["--slicing", "vertical", "--slices", "3"]),
    ("diced-h-v", ["--slicing", "diced", "--slices", "3x2"]),
    ("diced-v-h", ["--slicing", "diced", "--slices", "3x2", "--dicing", "v-h"]),
]


def test_every_slicing_delivers_each_key_once_at_the_target_rate():
    rng = random.Random(SEED)
    with Cluster(masters=3) as cluster:
        for name, slicing in SLICINGS:
            for window in ([], ["--span", "1h"]):
                key = "f-%s-%d" % (name, len(window))
                opts = [*slicing, *window, "--capacity", "4000", "--error", "0.01",
                        "--seed", "11", "--stats=json"]
                stored = keys_of(key + "-s", 4000)
                out, stats = once(cluster, key, *opts, data=lines(repeated_stream(stored, 12000, rng)))
                # No repeat inside the window; the first of each key kept, but for the
                # false positives of a filter filling to its capacity.
                assert len(out) == len(set(out)) and set(out) <= set(stored), name
                low, high = binomial_bounds(len(stored), 0.01)
                assert len(stored) - len(out) <= high, (name, window, len(out))
                p_full = stats["fp_estimate"]
                # Fresh keys at the fill reached: false positives at the filter's rate
                # (which grows as the fresh keys go in: bounded by both ends).
                fresh = keys_of(key + "-fresh", 20000)
                out2, stats2 = once(cluster, key, *opts, data=lines(fresh))
                suppressed = len(fresh) - len(out2)
                low, _ = binomial_bounds(len(fresh), p_full)
                _, high = binomial_bounds(len(fresh), stats2["fp_estimate"])
                assert low <= suppressed <= high, (name, window, suppressed, p_full,
                                                   stats2["fp_estimate"])
                # A batch costs one command a slice touched, and then some: never one
                # an event.
                assert stats["commands"] < 0.1 * 12000, (name, stats["commands"])
                assert stats["failed_slices"] == 0 and stats["unreachable"] == 0
                assert layout_of(cluster, key).startswith("once cluster layout 1\n")


def test_vertical_answers_as_the_in_process_vertical_filter():
    rng = random.Random(SEED + 1)
    stored = keys_of("v", 3000)
    data = lines(repeated_stream(stored, 9000, rng) + keys_of("fresh", 6000))
    opts = ["--slicing", "vertical", "--slices", "3", "--capacity", "3000", "--error",
            "0.05", "--seed", "77"]
    local = subprocess.run([ONCE, *opts], input=data, capture_output=True, timeout=120)
    assert local.returncode == 0
    with Cluster(masters=3) as cluster:
        out, _ = once(cluster, "same", *opts, data=data)
    # The same false positives too: the filter is the same, only its sites are apart.
    assert out == local.stdout.splitlines()
    assert len(out) < 9000


def test_local_filter_answers_its_own_repeats_with_no_command():
    rng = random.Random(SEED + 5)
    stored = keys_of("own", 3000)
    fresh = keys_of("own-fresh", 6000)
    opts = ["--slicing", "vertical", "--slices", "3", "--capacity", "9000", "--error",
            "0.001", "--seed", "78", "--stats=json"]
    # From a file, not a pipe: the batches are then whole and the same in both runs,
    # whatever the machine's load (a pipe's are what has arrived), so the commands
    # they take compare.
    with tempfile.NamedTemporaryFile(suffix=".txt") as data, Cluster(masters=3) as cluster:
        data.write(lines(repeated_stream(stored, 9000, rng) + fresh))
        data.flush()
        alone, plain = once(cluster, "alone", *opts, data.name)
        out, two = once(cluster, "two", *opts, "--local-filter", data.name)
    # A repeat of this producer's own keys is the local filter's once a batch before
    # its own sent the key (inside one batch the shared filter answers it), and so are
    # the local filter's false positives among the rest, at its rate.
    _, high = binomial_bounds(len(stored) + len(fresh), 0.001)
    assert plain["local_hits"] == 0
    assert 3000 <= two["local_hits"] <= 6000 + high, two["local_hits"]
    # The shared filter decides the rest as it does alone; a local false positive is
    # the one difference.
    assert len(out) == len(set(out)) and set(out) <= set(stored) | set(fresh)
    assert len(set(alone) ^ set(out)) <= 2 * high
    assert two["messages"] < plain["messages"] and two["commands"] < plain["commands"]


def race(cluster, key, opts, streams):
    """Producers started together, each on its stream: their outputs."""
    procs = []
    for s in streams:
        command = [ONCE, "--cluster", cluster.seeds()[0], "--key", key, *opts]
        procs.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE))
    outs = []
    for p, s in zip(procs, streams):
        p.stdin.write(lines(s))
        p.stdin.close()
    for p in procs:
        out = p.stdout.read()
        err = p.stderr.read().decode()
        assert p.wait(timeout=240) == 0, err
        outs.append(out.splitlines())
    return outs


def test_racing_producers_deliver_each_key_at_most_once():
    rng = random.Random(SEED + 2)
    with Cluster(masters=3) as cluster:
        for producers in (2, 4):
            for name, slicing in SLICINGS[:2] + [("horizontal-span", SLICINGS[0][1] + ["--span", "1h"])]:
                key = "race-%s-%d" % (name, producers)
                stored = keys_of(key, 3000)
                # Each producer sees every key, in its own order, several times.
                streams = [repeated_stream(stored, 6000, rng) for _ in range(producers)]
                opts = [*slicing, "--capacity", "6000", "--error", "0.001", "--seed", "3"]
                outs = race(cluster, key, opts, streams)
                delivered = [k for out in outs for k in out]
                assert len(delivered) == len(set(delivered)), (name, producers,
                                                               len(delivered) - len(set(delivered)))
                low, high = binomial_bounds(len(stored), 0.001)
                assert len(stored) - len(set(delivered)) <= high, (name, producers)


def memory_of(cluster, keys):
    """MEMORY USAGE of `keys`, each asked of the master that serves it."""
    total = 0
    for key in keys:
        node = cluster.nodes[cluster.owner(cluster.keyslot(key))]
        total += node.call("MEMORY", "USAGE", key, "SAMPLES", "0")
    return total


def test_whole_slices_are_the_default_and_take_one_nodes_memory():
    # Without --slicing a filter over a cluster is 16 whole slices, horizontal: each a
    # filter of the structure the options choose, for its share of the keys.
    rng = random.Random(SEED + 20)
    with Cluster(masters=3) as cluster:
        for window, one_node in (([], ["BF.RESERVE", "one-all", "0.001", "200000"]),
                                 (["--span", "1h"], ["ONCE.RESERVE", "one-span", "SPAN",
                                                     "3600000", "CAPACITY", "200000",
                                                     "ERROR", "0.001"])):
            key = "whole-%d" % len(window)
            opts = [*window, "--capacity", "200000", "--error", "0.001", "--seed", "21",
                    "--stats=json"]
            stored = keys_of(key, 20000)
            out, stats = once(cluster, key, *opts,
                              data=lines(repeated_stream(stored, 50000, rng)))
            assert len(out) == len(set(out)) and set(out) <= set(stored)
            _, high = binomial_bounds(len(stored), 0.001)
            assert len(stored) - len(out) <= high, (window, len(out))
            assert layout_of(cluster, key).startswith("once cluster layout 3\n")
            assert stats["slice_filter"] == ("tagged" if window else "blocked")  # a stated capacity
            assert stats["slices"] == 16 and stats["claims"] is False
            assert stats["slice_items"] == len(out) and stats["bytes"] > 0
            # A time window's slices allow a lag of a twelfth of the span by default.
            assert stats["lag_ms"] == (300000 if window else 0), stats["lag_ms"]
            # One command a slice a batch: a few hundred for 50,000 events.
            assert stats["commands"] < 0.01 * 50000, stats["commands"]
            # The slices' memory, in the servers, against one node's filter of the same
            # span, error and capacity: at most 1.3x (a slice's share has four standard
            # deviations of room, each key its Redis object).
            node_key = "{%s}%s" % (key, one_node[1])
            node = cluster.nodes[cluster.owner(cluster.keyslot(node_key))]
            node.call(one_node[0], node_key, *one_node[2:])
            cluster_bytes = memory_of(cluster, slice_keys(cluster, key))
            node_bytes = node.call("MEMORY", "USAGE", node_key, "SAMPLES", "0")
            assert cluster_bytes <= 1.3 * node_bytes, (window, cluster_bytes, node_bytes)
            # Fresh keys at the filter's rate.
            fresh = keys_of(key + "-fresh", 20000)
            out2, _ = once(cluster, key, *opts, data=lines(fresh))
            _, high = binomial_bounds(len(fresh), 0.001)
            assert len(fresh) - len(out2) <= high


def test_whole_slices_answer_racing_producers_once():
    rng = random.Random(SEED + 21)
    with Cluster(masters=3) as cluster:
        for producers in (2, 4):
            for window in ([], ["--span", "1h"]):
                key = "wrace-%d-%d" % (producers, len(window))
                stored = keys_of(key, 3000)
                streams = [repeated_stream(stored, 6000, rng) for _ in range(producers)]
                opts = [*window, "--slices", "6", "--capacity", "6000", "--error", "0.001",
                        "--seed", "3"]
                outs = race(cluster, key, opts, streams)
                delivered = [k for out in outs for k in out]
                assert len(delivered) == len(set(delivered)), (producers, window)
                _, high = binomial_bounds(len(stored), 0.001)
                assert len(stored) - len(set(delivered)) <= high, (producers, window)


def timed(keys, ms):
    """Lines of `keys` with event time `ms` (epoch ms) in their second field."""
    return [b"%s\t%d" % (k, ms) for k in keys]


T0 = 1_700_000_000_000  # event time, epoch ms
MINUTE = 60_000


def test_lagging_producers_judge_each_line_at_its_own_time():
    # Two producers racing on a one-hour window, four minutes apart in event time: B,
    # ahead at T0 + 63 min, sends fresh keys; A, behind at T0 + 59 min, sends fresh keys
    # and the keys a first run delivered at T0.  At A's time those are 59 minutes old,
    # repeats; at B's clock they would be 63 minutes old, past the span.  Whatever order
    # their lines reach the slices, A's repeats are dropped and every fresh key is
    # delivered, but for false positives: for whole slices by the lag they default to
    # (a twelfth of the span), for every slicing of cells (horizontal, vertical, both
    # dicings) by their timers, which judge each line at its own time.
    rng = random.Random(SEED + 22)
    with Cluster(masters=3) as cluster:
        for name, slicing in (("whole", []), *SLICINGS):
            key = "lag-" + name
            opts = [*slicing, "--span", "1h", "--capacity", "20000", "--error", "0.001",
                    "--seed", "7", "--field", "1", "--time-field", "2", "--time-format", "epoch_ms"]
            base = keys_of(key + "-base", 3000)
            first, _ = once(cluster, key, *opts, data=lines(timed(base, T0)))
            _, high = binomial_bounds(len(base), 0.001)
            assert len(first) >= len(base) - high, (name, len(first))
            fresh_a, fresh_b = keys_of(key + "-a", 3000), keys_of(key + "-b", 3000)
            a = timed(fresh_a + base, T0 + 59 * MINUTE)
            b = timed(fresh_b, T0 + 63 * MINUTE)
            rng.shuffle(a)
            outs = race(cluster, key, opts, [a, b])
            got_a, got_b = set(outs[0]), set(outs[1])
            # No repeat: no false negative inside the span, whatever the race.
            assert not got_a & set(timed(base, T0 + 59 * MINUTE)), (name, len(got_a))
            _, high = binomial_bounds(len(fresh_a), 0.001)
            assert len(got_a) >= len(fresh_a) - high, (name, len(got_a))
            assert len(got_b) >= len(fresh_b) - high, (name, len(got_b))
        # Without the lag a whole slice judges A's late lines at its clock: once B's
        # lines moved it past T0 + 1 h, the base's keys read as expired, and come out
        # again.  (What the default lag is for.)
        key = "lag-none"
        opts = ["--span", "1h", "--lag", "0", "--capacity", "20000", "--error", "0.001",
                "--seed", "7", "--field", "1", "--time-field", "2", "--time-format", "epoch_ms"]
        base = keys_of(key + "-base", 3000)
        once(cluster, key, *opts, data=lines(timed(base, T0)))
        once(cluster, key, *opts, data=lines(timed(keys_of(key + "-b", 3000), T0 + 63 * MINUTE)))
        again, _ = once(cluster, key, *opts, data=lines(timed(base, T0 + 59 * MINUTE)))
        assert len(again) > 0.9 * len(base), len(again)


def test_whole_slices_refuse_options_of_cells():
    with Cluster(masters=1) as cluster:
        for args, said in ((["--on-failed-slice", "threshold:2"], "threshold"),
                           (["--filter", "apbf"], "whole filter"),
                           (["--slices", "3x2"], "diced")):
            p = subprocess.run([ONCE, "--cluster", cluster.seeds()[0], "--key", "bad", *args],
                               input=b"a\n", capture_output=True, timeout=60)
            assert p.returncode == 1 and said in p.stderr.decode(), (args, p.stderr)


def test_a_producer_starts_with_the_layouts_master_down():
    # No single key stops a producer: the layout has copies beside the slices, spread
    # over the masters, and a producer reads one when NAME:layout's master is down.
    with Cluster(masters=3) as cluster:
        opts = ["--capacity", "20000", "--error", "0.001", "--seed", "5"]
        stored = keys_of("copies", 5000)
        out, _ = once(cluster, "copies", *opts, data=lines(stored))
        assert len(out) >= 4990
        cluster.kill(cluster.owner(cluster.keyslot("copies:layout")))
        seeds = ",".join(cluster.seeds())
        for policy in ("distinct", "duplicate"):
            fresh = keys_of("copies-" + policy, 5000)
            p = subprocess.run([ONCE, "--cluster", seeds, "--key", "copies", *opts,
                                "--on-failed-slice", policy, "--stats=json"],
                               input=lines(fresh + stored), capture_output=True, timeout=240)
            assert p.returncode == 0, p.stderr.decode()
            got = p.stdout.splitlines()
            stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
            assert stats["failed_slices"] > 0 and stats["failed_events"] > 0
            if policy == "distinct":  # every fresh key, and stored ones of failed slices
                _, high = binomial_bounds(len(fresh), 0.001)
                assert len(set(got) & set(fresh)) >= len(fresh) - high
                assert set(got) - set(fresh) <= set(stored)
            else:  # no stored key again; the failed slices' fresh keys dropped
                assert not set(got) & set(stored)
                _, high = binomial_bounds(len(fresh), 0.001)
                assert set(got) <= set(fresh)
                assert len(got) + stats["failed_events"] >= len(fresh) - high


def layout_of(cluster, name):
    """The layout text of filter `name`."""
    node = cluster.nodes[cluster.owner(cluster.keyslot("%s:layout" % name))]
    return node.call("GET", "%s:layout" % name)


def count_of(cluster, name):
    """The count window's clock of filter `name`: the events its producers delivered."""
    node = cluster.nodes[cluster.owner(cluster.keyslot("%s:count" % name))]
    value = node.call("GET", "%s:count" % name)
    return None if value is None else int(value)


def window_stream(n, rng, prefix):
    """Lines "i<TAB>key": half fresh keys, the others repeats of a key from about 1,500
    or about 6,000 events back, so that some repeats fall inside a count window of
    2,000 deliveries and others far past it."""
    keys = []
    for i in range(n):
        back = 1500 if i % 3 else 6000
        if i >= back and rng.random() < 0.5:
            keys.append(keys[i - 1 - rng.randrange(back)])
        else:
            keys.append(b"%s-%d" % (prefix.encode(), i))
    return keys, b"".join(b"%d\t%s\n" % (i, k) for i, k in enumerate(keys))


def test_count_windows_keep_the_last_n_deliveries_of_every_producer():
    # --window N over a cluster: a key is suppressed while fewer than N others were
    # delivered after it (no false negative), and forgotten once N and a batch's
    # slack (N/16) were.  The count is the key NAME:count, one a delivery.  Whole
    # slices (the default) are tagged windows on the count; slices of cells, timers.
    window = 2000
    rng = random.Random(SEED + 7)
    with Cluster(masters=3) as cluster:
        for name, slicing in [("whole", []), *SLICINGS[:3]]:
            key = "count-%s" % name
            keys, data = window_stream(30000, rng, key)
            opts = [*slicing, "--window", str(window), "--error", "0.01", "--seed", "5",
                    "-f", "2", "--stats=json"]
            out, stats = once(cluster, key, *opts, data=data)
            delivered_at = set(int(l.split(b"\t")[0]) for l in out)
            assert stats["window"] == window and stats["window_unit"] == "events"
            assert stats["count"] == len(out) == count_of(cluster, key)
            assert stats["claims"] == (name != "whole") and stats["clock_failures"] == 0
            assert stats["slice_filter"] == ("tagged" if name == "whole" else "cells")
            place, delivered = {}, 0
            inside = inside_kept = long_gone = forgotten = 0
            for i, k in enumerate(keys):
                was = place.get(k)
                got = i in delivered_at
                if was is not None and delivered - was < window:
                    inside += 1
                    inside_kept += not got  # a repeat inside the window: suppressed
                if was is not None and delivered - was >= window + window // 16:
                    long_gone += 1
                    forgotten += got
                if got:
                    place[k] = delivered
                    delivered += 1
            assert inside > 5000 and inside_kept == inside, (name, inside, inside_kept)
            assert long_gone > 1000 and forgotten > 0.9 * long_gone, (name, long_gone, forgotten)
            # Fresh keys: false positives at most at the rate of a full window.
            fresh = keys_of(key + "-fresh", 5000)
            out, stats = once(cluster, key, *opts[:-3], "--stats=json", data=lines(fresh))
            _, high = binomial_bounds(len(fresh), 0.01)
            assert len(fresh) - len(out) <= high, (name, len(fresh) - len(out))
        # The layout says so in version 2, which a producer that knows no count windows
        # refuses to read (version 1 stays what every other filter writes).
        layout = layout_of(cluster, "count-vertical")
        assert layout.startswith("once cluster layout 2\n") and "\nwindow_events 2000\n" in layout
        # Whole slices of a count window in version 4, which producers that know whole
        # slices of time windows alone (version 3) refuse.
        layout = layout_of(cluster, "count-whole")
        assert layout.startswith("once cluster layout 4\n") and "\nwindow_events 2000\n" in layout
        assert "\nfilter tagged\n" in layout and "\nwindow 0\nlag 0\n" in layout, layout
        err = once(cluster, "count-whole", "--window", "3000", "--error", "0.01", expect=1)[1]
        assert "count window 2000 events (asked 3000 events)" in err, err
        # Producers that contradict the layout are refused, with the difference named.
        err = once(cluster, "count-vertical", *SLICINGS[1][1], "--window", "3000", "--error",
                   "0.01", expect=1)[1]
        assert "count window 2000 events (asked 3000 events)" in err, err
        err = once(cluster, "count-vertical", *SLICINGS[1][1], "--span", "1h", "--capacity",
                   "2000", "--error", "0.01", expect=1)[1]
        assert "count window 2000 events (asked 0 events)" in err, err
        # A count lost with its node's data reads as a failed clock, not as 0: under
        # "duplicate" every event is suppressed, and the count is not made again.
        for key, slicing in (("count-vertical", SLICINGS[1][1]), ("count-whole", [])):
            cluster.nodes[cluster.owner(cluster.keyslot(key + ":count"))].call(
                "DEL", key + ":count")
            out, stats = once(cluster, key, *slicing, "--window", str(window), "--error",
                              "0.01", "--on-failed-slice", "duplicate", "--stats=json",
                              data=lines(keys_of("after-loss", 300)))
            assert out == [] and stats["clock_failures"] > 0, (key, len(out), stats)
            assert count_of(cluster, key) is None


def test_racing_producers_share_one_count():
    # Racing producers on one count window: each key delivered once between them, and
    # every delivery took one place in the common count; slices of cells (claims) and
    # whole slices (a key meets its racing repeat at its slice).
    rng = random.Random(SEED + 8)
    with Cluster(masters=3) as cluster:
        for producers, whole in ((2, False), (4, False), (2, True), (4, True)):
            key = "count-race-%d%s" % (producers, "-whole" if whole else "")
            stored = keys_of(key, 3000)
            streams = [repeated_stream(stored, 6000, rng) for _ in range(producers)]
            opts = ["--slicing", "vertical", "--slices", "3", "--window", "20000", "--error",
                    "0.001", "--seed", "3"]
            if whole:  # the default
                opts = opts[4:]
            outs = race(cluster, key, opts, streams)
            delivered = [k for out in outs for k in out]
            assert len(delivered) == len(set(delivered)), (producers,
                                                           len(delivered) - len(set(delivered)))
            _, high = binomial_bounds(len(stored), 0.001)
            assert len(stored) - len(delivered) <= high, producers
            assert count_of(cluster, key) == len(delivered)


def test_killed_master_costs_what_the_failure_formulas_say():
    # phi = 1/3: one master of three holds one slice of three.
    with Cluster(masters=3) as cluster:
        opts = ["--slicing", "vertical", "--slices", "3", "--capacity", "6000", "--error",
                "0.02", "--seed", "9"]
        stored = keys_of("stored", 6000)
        out, _ = once(cluster, "kill", *opts, data=lines(stored))
        assert len(out) > 5800
        cluster.kill(victim_of(cluster, "kill"))
        # duplicate: a failed position counts as set, so fresh keys are suppressed more
        # (FP up) and stored keys never come out (FN 0).  The rate at the start (a few
        # keys to learn it) and at the end bound the fresh keys suppressed: each
        # inserted one fills the reachable slices a little more.
        duplicate = [*opts, "--on-failed-slice", "duplicate", "--stats=json"]
        _, start = once(cluster, "kill", *duplicate, data=lines(keys_of("learn", 20)))
        fresh = keys_of("fresh", 6000)
        out, stats = once(cluster, "kill", *duplicate, data=lines(fresh))
        assert stats["failed_slices"] == 1 and abs(stats["failed_fraction"] - 1 / 3) < 1e-5
        # Without a replica nothing would take over: no hold, the policy at once.
        assert stats["held"] == 0 and stats["failed_events"] > 0, stats
        assert start["fp_estimate"] > 0.05  # far above the rate without a failure
        low, _ = binomial_bounds(len(fresh), start["fp_estimate"])
        _, high = binomial_bounds(len(fresh), stats["fp_estimate"])
        assert low <= len(fresh) - len(out) <= high, (len(fresh) - len(out), start["fp_estimate"],
                                                      stats["fp_estimate"])
        out, stats = once(cluster, "kill", *opts, "--on-failed-slice", "duplicate",
                          "--stats=json", data=lines(stored[:3000]))
        assert out == [] and stats["fn_estimate"] == 0
        # distinct: any failed position makes a key new: stored keys with a position in
        # the lost slice come out again, at the formula's rate.
        repeats = stored[3000:]
        out, stats = once(cluster, "kill", *opts, "--on-failed-slice", "distinct",
                          "--stats=json", data=lines(repeats))
        low, high = binomial_bounds(len(repeats), stats["fn_estimate"])
        assert low <= len(out) <= high, (len(out), stats["fn_estimate"])
        assert stats["lines"] == len(repeats)


def feed(proc, data, sentinel, seconds=60):
    """Write data and a sentinel line; read output lines until the sentinel comes out."""
    proc.stdin.write(data + sentinel + b"\n")
    proc.stdin.flush()
    got, buffer = [], b""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "the producer did not answer %r" % sentinel
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if not ready:
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        assert chunk, "the producer ended early: %s" % proc.stderr.read().decode()
        buffer += chunk
        *done, buffer = buffer.split(b"\n")
        got += done
        if sentinel in done:
            got.remove(sentinel)
            return got


def producer(cluster, key, opts):
    command = [ONCE, "--cluster", ",".join(cluster.seeds()), "--key", key, *opts]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def finish(proc):
    proc.stdin.close()
    out = proc.stdout.read()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    return out.splitlines(), err


def test_producer_goes_on_past_a_failover_and_wait_loses_nothing():
    with Cluster(masters=3, replicas=1) as cluster:
        opts = ["--slicing", "vertical", "--slices", "3", "--capacity", "20000", "--error",
                "0.001", "--seed", "4", "--wait", "--on-failed-slice", "distinct",
                "--stats=json"]
        p = producer(cluster, "fo", opts)
        first = keys_of("first", 5000)
        out = feed(p, lines(first), b"sync-1")
        assert len(out) > 4990
        cluster.kill(victim_of(cluster, "fo"))
        # During the failover the producer holds the dead master's lines until its
        # replica is promoted (test_failover.py), then goes on.
        during = feed(p, lines(keys_of("during", 500)), b"sync-during", seconds=120)
        assert len(during) == 500
        cluster.wait_ok()
        # Past the promotion: every key sent before, confirmed by WAIT, is still there.
        again = feed(p, lines(first), b"sync-2", seconds=120)
        second = keys_of("second", 3000)
        new = feed(p, lines(second), b"sync-3")
        out, err = finish(p)
        stats = json.loads(err.strip().splitlines()[-1])
        assert again == [], len(again)
        assert len(new) > 2990
        assert stats["waits"] > 0


def info_of(cluster, key):
    """SLICE.INFO of a slice key, as a dict, from the master that serves it."""
    node = cluster.nodes[cluster.owner(cluster.keyslot(key))]
    reply = node.call("SLICE.INFO", key)
    return dict(zip(reply[::2], reply[1::2]))


def through_an_outage(cluster, name, opts, count):
    """A producer of filter `name` (the filter made first) that sends `count` fresh
    lines while a master of its slices, not the layout's, is frozen, then sees it
    thawed and the cluster ok.  (the producer, the fresh keys, the lines it printed)."""
    once(cluster, name, *opts)
    victim = victim_of(cluster, name)
    p = producer(cluster, name, opts)
    try:
        feed(p, lines(keys_of(name + "-warm", 100)), b"sync-0")
        cluster.freeze(victim)
        first = keys_of(name + "-first", count)
        out = feed(p, lines(first), b"sync-1", seconds=120)
    finally:
        cluster.thaw(victim)
    cluster.wait_ok()
    return p, first, out


def test_lines_printed_for_a_failed_slice_reach_it_once_it_answers():
    # Whole slices, no replica: a frozen master's slices fail, and the default policy
    # prints their lines.  The producer owes them to their slices and sends them once
    # the slices answer again, so a repeat of any of them, from any producer, is dropped.
    # All time, and a count window (its lines owed by their stamps).
    with Cluster(masters=3) as cluster:
        for name, sizing in (("owed", ["--capacity", "20000"]), ("owed-count",
                                                                  ["--window", "20000"])):
            opts = [*sizing, "--error", "0.001", "--seed", "8", "--stats=json"]
            p, first, out = through_an_outage(cluster, name, opts, 6000)
            _, high = binomial_bounds(len(first), 0.001)
            assert len(out) >= len(first) - high, (name, len(out))  # by the policy
            # Batches until the slices hold every key sent (but false positives): the
            # owed lines go with the first batch after the client's backoff for the
            # frozen master (at most 2 s) has passed.
            sent, i = 100 + 1 + len(first) + 1, 0  # with the sync lines
            deadline = time.monotonic() + 60
            while True:
                feed(p, lines(keys_of("%s-after-%d" % (name, i), 50)), b"sync-after-%d" % i)
                sent, i = sent + 51, i + 1
                _, high = binomial_bounds(sent, 0.001)
                held = sum(info_of(cluster, key)["Number of items inserted"]
                           for key in slice_keys(cluster, name))
                if held >= sent - high:
                    break
                assert time.monotonic() < deadline, ("owed lines never reached their slices",
                                                     name, held, sent)
                time.sleep(0.05)
            _, err = finish(p)
            stats = json.loads(err.strip().splitlines()[-1])
            assert stats["failed_events"] > 1000 and stats["given_up"] == 0, (name, stats)
            assert stats["owed"] == 0, (name, stats)
            # All time, a failed line is owed once; a count window owes stamps, whose
            # round may fail or answer apart from its test's round as the master thaws.
            if name == "owed":
                assert stats["backfilled"] == stats["failed_events"], (name, stats)
            else:
                assert stats["backfilled"] >= 0.9 * stats["failed_events"], (name, stats)
            # Another producer: every key of the outage is a repeat now.
            again, _ = once(cluster, name, *opts, data=lines(first))
            assert again == [], (name, len(again))


def test_a_producer_that_stops_after_an_outage_sends_what_it_owes_as_it_ends():
    # The input ends while lines printed for a failed slice are still owed: the
    # producer sends them as it ends (once_cluster_flush), not only ahead of a next
    # batch that never comes.  Whole slices and vertical slices of cells.
    with Cluster(masters=3) as cluster:
        for name, slicing in (("ends", []), ("ends-v", ["--slicing", "vertical",
                                                        "--slices", "3"])):
            opts = [*slicing, "--capacity", "20000", "--error", "0.001", "--seed", "8",
                    "--stats=json"]
            p, first, _ = through_an_outage(cluster, name, opts, 3000)
            time.sleep(2.5)  # past the client's backoff for the frozen master (2 s at most)
            _, err = finish(p)
            stats = json.loads(err.strip().splitlines()[-1])
            assert stats["failed_events"] > 500 and stats["owed"] == 0, (name, stats)
            # Slices of cells: a master thawing between a batch's two rounds takes the
            # sets of events its first round failed (see the test below).
            floor = 1.0 if name == "ends" else 0.9
            assert stats["backfilled"] >= floor * stats["failed_events"], (name, stats)
            again, _ = once(cluster, name, *opts, data=lines(first))
            assert again == [], (name, len(again))


def test_lines_printed_for_a_failed_slice_of_cells_reach_it_once_it_answers():
    # Slices of cells, no replica: a frozen master's slices fail, and the default policy
    # prints every line with a position there and sets the positions the others hold.
    # The producer owes the failed slices their sets and sends them once the slices
    # answer again: a repeat is then a duplicate for any producer, all time or windowed.
    with Cluster(masters=3) as cluster:
        for name, extra in (("owed-v", ["--slicing", "vertical", "--slices", "3"]),
                            ("owed-hv", ["--slicing", "diced", "--slices", "3x2",
                                         "--span", "1h"])):
            opts = [*extra, "--capacity", "20000", "--error", "0.001", "--seed", "8",
                    "--stats=json"]
            p, first, out = through_an_outage(cluster, name, opts, 6000)
            assert len(out) == len(first), (name, len(out))  # printed by the policy
            victim = victim_of(cluster, name)
            keys = slice_keys(cluster, name)
            on_victim = [k for k in keys if cluster.owner(cluster.keyslot(k)) == victim]
            elsewhere = [k for k in keys if k not in on_victim]
            # Batches until the victim's slices caught up with the others (each took
            # about as many sets): the owed sets go with the first batch after the
            # client's backoff for the frozen master (at most 2 s) has passed.  Without
            # them a victim's slice holds the few keys sent since, not thousands.
            deadline, i = time.monotonic() + 60, 0
            while True:
                feed(p, lines(keys_of("%s-after-%d" % (name, i), 50)), b"sync-after-%d" % i)
                i += 1
                items = {k: info_of(cluster, k)["Number of items inserted"] for k in keys}
                mean = sum(items[k] for k in elsewhere) / len(elsewhere)
                if min(items[k] for k in on_victim) >= 0.8 * mean:
                    break
                assert time.monotonic() < deadline, ("owed sets never reached their slices",
                                                     name, items)
                time.sleep(0.05)
            _, err = finish(p)
            stats = json.loads(err.strip().splitlines()[-1])
            assert stats["failed_events"] > 1000 and stats["given_up"] == 0, (name, stats)
            assert stats["owed"] == 0, (name, stats)
            # An event decided by the policy in round 1 (its test) owes its sets only if
            # round 2 failed too: a master thawing between the rounds takes them itself.
            assert stats["backfilled"] >= 0.9 * stats["failed_events"], (name, stats)
            # Another producer: every key of the outage is a repeat now.
            again, _ = once(cluster, name, *opts, data=lines(first))
            assert again == [], (name, len(again))


def test_slot_moved_mid_stream_costs_nothing():
    with Cluster(masters=3) as cluster:
        opts = ["--slicing", "vertical", "--slices", "3", "--capacity", "20000", "--error",
                "0.001", "--seed", "6", "--stats=json"]
        p = producer(cluster, "mv", opts)
        first = keys_of("first", 4000)
        out = feed(p, lines(first), b"sync-1")
        assert len(out) > 3990
        moving = slice_keys(cluster, "mv")[0]
        slot = cluster.keyslot(moving)
        source = cluster.owner(slot)
        target = (source + 1) % 3
        cluster.begin_move_slot(slot, target, migrate=0)
        during = feed(p, lines(first[:2000] + keys_of("during", 1000)), b"sync-2")
        cluster.finish_move_slot(slot)
        after = feed(p, lines(first[2000:] + keys_of("after", 1000)), b"sync-3")
        out, err = finish(p)
        stats = json.loads(err.strip().splitlines()[-1])
        # Nothing lost, nothing delivered twice, no error to the user: the routing
        # followed ASK and MOVED.
        assert set(during) <= set(keys_of("during", 1000)) and len(during) > 990
        assert set(after) <= set(keys_of("after", 1000)) and len(after) > 990
        assert stats["failed_slices"] == 0 and stats["unreachable"] == 0
        assert stats["moved"] + stats["ask"] > 0
        assert "error" not in err.lower()


def test_node_restarted_empty_reads_as_failed_slices():
    with Cluster(masters=3) as cluster:
        opts = ["--slicing", "vertical", "--slices", "3", "--capacity", "6000", "--error",
                "0.01", "--seed", "8"]
        stored = keys_of("stored", 4000)
        once(cluster, "empty", *opts, data=lines(stored))
        cluster.restart(victim_of(cluster, "empty"), empty=True)
        cluster.wait_ok()
        # Not an empty slice (every stored key would come out again): a failed one.
        out, stats = once(cluster, "empty", *opts, "--on-failed-slice", "duplicate",
                          "--stats=json", data=lines(stored))
        assert out == []
        assert stats["failed_slices"] >= 1 and stats["missing_answers"] > 0
        # And a producer that opens the filter now makes nothing back: still failed.
        out, stats = once(cluster, "empty", *opts, "--on-failed-slice", "duplicate",
                          "--stats=json", data=lines(stored[:10]))
        assert stats["missing_answers"] > 0


def test_bloom_tree_over_the_cluster_stops_repeats_at_the_leaf_and_races_safely():
    rng = random.Random(SEED + 3)
    with Cluster(masters=3) as cluster:
        tree = ["--tree", "3x2", "--capacity", "20000", "--error", "0.001", "--seed", "2"]
        # One producer: its own repeats end at its leaf, with no message; what climbs
        # is each key once.
        own = keys_of("own", 2000)
        out, err = once(cluster, "tree", *tree, "--leaf", "0", "--stats",
                        data=lines(repeated_stream(own, 8000, rng)))
        assert sorted(out) == sorted(own)
        levels = [l for l in err.splitlines() if "requests per level" in l][0]
        counts = [int(x) for x in levels.split(":")[-1].split()[0::2]]
        assert counts[2] == 8000 and counts[1] == 2000, levels  # leaf, then its parent
        _, stats = once(cluster, "tree", *tree, "--leaf", "1", "--stats=json",
                        data=lines(own[:100]))
        assert stats["structure"] == "cluster tree" and stats["levels"] == 3
        assert stats["accesses"][2] == 100 and stats["hits"][1] == 100  # leaf 1's parent has them
        # Producers at four leaves racing on the same keys: each key once between them
        # (each step up the tree is one atomic test-and-set on one key).
        shared = keys_of("shared", 2000)
        procs = []
        for leaf in range(4):
            command = [ONCE, "--cluster", cluster.seeds()[0], "--key", "tree", *tree,
                       "--leaf", str(leaf)]
            procs.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE))
        for p in procs:
            p.stdin.write(lines(repeated_stream(shared, 4000, rng)))
            p.stdin.close()
        delivered = []
        for p in procs:
            delivered += p.stdout.read().splitlines()
            assert p.wait(timeout=240) == 0, p.stderr.read()
        assert len(delivered) == len(set(delivered))
        assert len(shared) - len(delivered) <= binomial_bounds(len(shared), 0.001)[1]
        # A producer with another tree is refused with the difference named.
        _, err = once(cluster, "tree", "--tree", "2x4", "--capacity", "20000", "--error",
                      "0.001", data=b"", expect=1)
        assert "tree levels 3 (asked 2)" in err


def test_windowed_bloom_tree_keeps_the_span_and_races_safely():
    # --tree with --span: timers at every node, a walk that tests and then sets, and
    # claims so that racing producers still print each key at most once.
    rng = random.Random(SEED + 9)
    with Cluster(masters=3) as cluster:
        tree = ["--tree", "3x2", "--capacity", "20000", "--error", "0.001", "--seed", "4",
                "--span", "10s", "--time-field", "1", "-f", "2", "--ws"]
        at = lambda events: b"".join(b"%d %s\n" % (t, k) for t, k in events)
        # A key is a repeat inside 10 s of its delivery, from any leaf, and new after.
        out, _ = once(cluster, "wtree", *tree, "--leaf", "0",
                      data=at([(1000, b"a"), (1005, b"a"), (1009, b"b")]))
        assert out == [b"1000 a", b"1009 b"]
        out, _ = once(cluster, "wtree", *tree, "--leaf", "3",
                      data=at([(1008, b"a"), (1011, b"a"), (1015, b"b"), (1020, b"b")]))
        assert out == [b"1011 a", b"1020 b"]  # a's window ended at 1010, b's at 1019
        # Producers at four leaves racing on the same keys, every time inside one span
        # (2,000 s to 2,009 s): each key once between them.
        shared = keys_of("shared", 2000)
        streams = [[(2000 + i // 400, k) for i, k in enumerate(repeated_stream(shared, 4000, rng))]
                   for _ in range(4)]
        procs = []
        for leaf in range(4):
            command = [ONCE, "--cluster", cluster.seeds()[0], "--key", "wtree", *tree,
                       "--leaf", str(leaf)]
            procs.append(subprocess.Popen(command, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        for p, stream in zip(procs, streams):
            p.stdin.write(at(stream))
            p.stdin.close()
        delivered = []
        for p in procs:
            delivered += [l.split()[1] for l in p.stdout.read().splitlines()]
            assert p.wait(timeout=240) == 0, p.stderr.read()
        assert len(shared) - len(set(delivered)) <= binomial_bounds(len(shared), 0.001)[1]
        assert len(delivered) == len(set(delivered)), len(delivered) - len(set(delivered))


def test_acknowledged_sets_a_failover_loses_are_what_the_docs_say():
    # Replication is asynchronous (docs/CLUSTER.md, "Durability"): with its replica
    # stopped, a master acknowledges sets the replica never gets; promoted, the replica
    # has forgotten them, and their keys may be printed again.  With --wait the
    # producer was told: its WAITs came back short.
    with Cluster(masters=3, replicas=1) as cluster:
        opts = ["--slicing", "horizontal", "--slices", "3", "--capacity", "20000", "--error",
                "0.001", "--seed", "5", "--on-failed-slice", "distinct"]
        once(cluster, "dur", *opts, data=lines(keys_of("before", 1000)))
        cluster.wait_replicated()
        victim = victim_of(cluster, "dur")
        replica = cluster.replicas_of(victim)[0]
        cluster.freeze(replica)
        try:
            unconfirmed = keys_of("unconfirmed", 3000)
            out, stats = once(cluster, "dur", *opts, "--wait", "--stats=json",
                              data=lines(unconfirmed))
            assert len(out) > 2990
            assert stats["waits_short"] > 0  # the producer knows these did not reach it
            cluster.kill(victim)
        finally:
            cluster.thaw(replica)
        cluster.wait_ok()
        # Keys confirmed before the freeze are all there.  Of the unconfirmed ones, only
        # keys of the dead master's slice (a third: 1,000 +- 5 sigma) may come out again:
        # those whose sets the replica had not received when it stopped (how many were
        # already in its socket is the kernel's).
        out, stats = once(cluster, "dur", *opts, "--stats=json",
                          data=lines(keys_of("before", 1000)))
        assert out == [], (len(out), out[:3], stats)
        again, _ = once(cluster, "dur", *opts, data=lines(unconfirmed))
        assert set(again) <= set(unconfirmed) and len(again) <= 1130, len(again)
