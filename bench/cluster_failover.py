"""cluster_failover.py - repeats a producer delivers while a master is killed under it.

Usage: /usr/bin/python3 bench/cluster_failover.py ONCE_CLI MODULE_SO [EVENTS] [RATE] [RUNS]

On 3 masters with a replica each (Debian's redis-server with the module, on loopback,
tests/cluster/cluster.py), at cluster-node-timeout 1000 and 5000: `once --cluster`
with the default whole slices (16, blocked filters), and with vertical slicing over 3
slices of cells (capacity 10^6 at 0.1%: 600 KB slices), reads
EVENTS lines (default 300,000; a third new keys, the rest repeats of earlier ones) from
a pipe written at RATE lines a second (default 40,000), and one master holding a slice
is killed by its PID when 40% of them are written (tests/cluster/failover.py).  Each
of: no hold (--failover-hold 0), the default hold, the default hold with --wait; RUNS
times each (default 1), a new cluster each run.

Prints a Markdown table on stdout: repeats delivered (a key printed twice), keys lost
(sent, never printed), commands held and the time holding, events the failure policy
decided, and the stream's seconds; progress on stderr.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "module"))

VARIANTS = [
    ("--failover-hold 0", ["--failover-hold", "0"]),
    ("default hold (15 s)", []),
    ("default hold, --wait", ["--wait"]),
]
SLICINGS = [
    ("whole slices", []),
    ("vertical S=3", ["--slicing", "vertical", "--slices", "3"]),
]
OPTS = ["--capacity", "1000000", "--error", "0.001", "--stats=json"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    once, module = os.path.abspath(sys.argv[1]), sys.argv[2]
    events = int(sys.argv[3]) if len(sys.argv) > 3 else 300000
    rate = int(sys.argv[4]) if len(sys.argv) > 4 else 40000
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    os.environ["ONCE_MODULE"] = os.path.abspath(module)  # each server runs in its own directory
    from cluster import Cluster
    from failover import stream_through_kill

    print("| node timeout | slices | options | repeats | keys lost | held | holding s "
          "| decided by policy | stream s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for timeout in (1000, 5000):
        for slicing, shape in SLICINGS:
            for name, extra in VARIANTS:
                for run in range(runs):
                    print("node timeout %d, %s, %s, run %d" % (timeout, slicing, name, run + 1),
                          file=sys.stderr)
                    with Cluster(masters=3, replicas=1,
                                 extra=("--cluster-node-timeout", str(timeout))) as cluster:
                        r = stream_through_kill(cluster, "bench", [*shape, *OPTS, *extra],
                                                events=events, rate=rate, seed=run + 1, once=once)
                    s = r["stats"]
                    print("| %d | %s | %s | %d | %d | %d | %.2f | %d | %.1f |" % (
                        timeout, slicing, name, r["repeats"], r["lost"], s["held"],
                        s["hold_ms"] / 1000.0, s["failed_events"], r["seconds"]))
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
