"""once.ClusterFilter over a real Redis Cluster (Debian's redis-server with the module):
producers in Python and the CLI share one filter, and answer alike."""
import os
import sys

import pytest

import once
from conftest import run_cli

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cluster"))
from cluster import Cluster  # noqa: E402


def lines(keys):
    return b"".join(k.encode() + b"\n" for k in keys)


def test_producers_in_python_and_the_cli_share_one_filter():
    with Cluster(masters=3) as cluster:
        seeds = ",".join(cluster.seeds())
        keys = ["k%d" % i for i in range(3000)]
        with once.ClusterFilter(seeds, "shared", capacity=20000, seed=4) as first:
            assert first.add_many(keys).count(1) >= 2990  # new but for false positives
            assert first.add("k1") is False and first.add("fresh") is True
            s = first.stats()
            assert s["slices"] == 16 and s["nodes"] == 3 and s["events"] == 3002
        with once.ClusterFilter(seeds, "shared", capacity=20000, seed=4) as second:
            assert second.add_many(keys) == bytes(len(keys))  # all repeats to another
            assert list(second.dedup(["fresh", "new-one", "new-one"])) == ["new-one"]
        # the CLI, one more producer of the same filter
        assert run_cli("--cluster", seeds, "--key", "shared", "--capacity", "20000",
                       "--seed", "4", data=lines(keys + ["new-one", "cli-only"])) == [b"cli-only"]
        # a different filter asked under the same name is refused with the layout's words
        with pytest.raises(ValueError, match="shared"):
            once.ClusterFilter(seeds, "shared", capacity=50000, seed=4)


def test_a_sliced_time_window_over_the_cluster():
    with Cluster(masters=3) as cluster:
        seeds = ",".join(cluster.seeds())
        start = 1_700_000_000
        keys = ["e%d" % (i % 1000) for i in range(2000)]  # each twice
        with once.ClusterFilter(seeds, "py-window", slicing="vertical", slices=3, span="10s",
                                capacity=5000, seed=6, time="event") as w:
            first = w.add_many(keys, at=[start + 0.003 * i for i in range(2000)])
            assert first[:1000].count(1) >= 995 and first[1000:].count(1) <= 5
            with pytest.raises(ValueError, match="at="):
                w.add("no time")
            # another producer, at the same time: repeats; 30 s later: new again
            with once.ClusterFilter(seeds, "py-window", slicing="vertical", slices=3,
                                    span="10s", capacity=5000, seed=6, time="event") as other:
                assert other.add_many(keys[:1000], at=start + 5).count(1) <= 5
            later = w.add_many(keys[:1000], at=start + 30)
            assert later.count(1) >= 995


def test_a_sliced_window_prints_what_the_cli_prints():
    # Each key twice 3 s apart, then again 30 s later: repeats inside the span, and
    # deliveries past it within the same batch as the keys' first deliveries.
    with Cluster(masters=3) as cluster:
        seeds = ",".join(cluster.seeds())
        start, events = 1_700_000_000_000, []
        for phase in (0, 30_000):
            for i in range(2000):
                events.append((start + phase + 3 * i, "e%d" % (i % 1000)))
        data = b"".join(b"%d\t%s\n" % (ms, key.encode()) for ms, key in events)
        cli = run_cli("--cluster", seeds, "--key", "cli-window", "--slicing", "vertical",
                      "--slices", "3", "--span", "10s", "--capacity", "5000", "--seed", "6",
                      "--time-field", "1", "--time-format", "epoch_ms", "-f", "2", data=data)
        with once.ClusterFilter(seeds, "py-window", slicing="vertical", slices=3, span="10s",
                                capacity=5000, seed=6, time="event") as w:
            mine = [b"%d\t%s" % (ms, key.encode())
                    for ms, key in w.dedup(events, key=lambda e: e[1], at=lambda e: e[0] / 1000)]
        assert mine == cli and 1990 <= len(cli) <= 2000, len(cli)


def test_an_unreachable_cluster_and_bad_options_raise():
    with pytest.raises(ConnectionError):
        once.ClusterFilter("127.0.0.1:1", "nowhere")
    with pytest.raises(ValueError, match="invalid slices 'many'"):
        once.ClusterFilter("127.0.0.1:1", "bad", slices="many")
