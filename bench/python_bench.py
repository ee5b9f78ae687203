"""python_bench.py - the package `once` against Python's own ways to drop repeats.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [N]

In one run, on N distinct str keys (default 10^6, "k" and a number), each figure the
best of 3:
  - add_many(keys) of a Filter for N keys at 0.1%, beside a loop of set.add and a loop
    of python3-flor's BloomFilter.add (Debian's, DCSO's C Bloom filter; its keys are
    bytes, encoded in the loop as a caller must); ratios to each;
  - one-key add in a loop, beside the loop of set.add: ns a key and the ratio;
  - memory for 10 N keys at 0.1% (once_bytes), against a set of the same str objects
    (the set's table and the strings, sys.getsizeof), and the ratio;
  - a Window(span="1h", time="event") over N keys spread over the hour, one at each
    of their times: the library's bits a key (once_bytes x 8 / N) at the hour's end.
Prints Markdown tables.
"""
import gc
import sys
import time

import once

try:
    import flor
except ImportError:
    flor = None


def best(fn, rounds=3):
    times = []
    for _ in range(rounds):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 1000000
    keys = ["k%d" % i for i in range(n)]

    def set_loop():
        s = set()
        add = s.add
        for k in keys:
            add(k)

    def once_batch():
        once.Filter(capacity=n, error=0.001, seed=1).add_many(keys)

    def once_loop():
        f = once.Filter(capacity=n, error=0.001, seed=1)
        add = f.add
        for k in keys:
            add(k)

    def flor_loop():
        b = flor.BloomFilter(n=n, p=0.001)
        add = b.add
        for k in keys:
            add(k.encode())

    t_set = best(set_loop)
    t_batch = best(once_batch)
    t_loop = best(once_loop)
    t_flor = best(flor_loop) if flor is not None else None
    print("| %d str keys | seconds (best of 3) | ns a key | once add_many is |" % n)
    print("|---|---:|---:|---:|")
    print("| once Filter add_many (0.1%%) | %.3f | %.0f | |" % (t_batch, t_batch / n * 1e9))
    print("| set.add, a loop | %.3f | %.0f | %.1fx faster |"
          % (t_set, t_set / n * 1e9, t_set / t_batch))
    if t_flor is not None:
        print("| python3-flor BloomFilter.add, a loop | %.3f | %.0f | %.1fx faster |"
              % (t_flor, t_flor / n * 1e9, t_flor / t_batch))
    else:
        print("| python3-flor | not installed | | |")
    print("| once Filter add, a loop | %.3f | %.0f | (%.2fx set.add's time) |"
          % (t_loop, t_loop / n * 1e9, t_loop / t_set))
    print()

    big = 10 * n
    f = once.Filter(capacity=big, error=0.001, seed=2)
    many = ["k%d" % i for i in range(big)]
    for i in range(0, big, 1000000):
        f.add_many(many[i:i + 1000000])
    s = set(many)
    set_bytes = sys.getsizeof(s) + sum(sys.getsizeof(k) for k in many)
    filter_bytes = f.stats()["bytes"]
    del s
    print("| %d str keys at 0.1%% | bytes | bytes a key |" % big)
    print("|---|---:|---:|")
    print("| once Filter | %d | %.2f |" % (filter_bytes, filter_bytes / big))
    print("| set of the str (table and strings) | %d | %.1f |" % (set_bytes, set_bytes / big))
    print("| ratio | 1/%.0f | |" % (set_bytes / filter_bytes))
    print()

    w = once.Window(span="1h", time="event", seed=3)
    start = 1_700_000_000
    times = [start + 3600 * i / n for i in range(n)]
    for i in range(0, n, 100000):
        w.add_many(keys[i:i + 100000], at=times[i:i + 100000])
    s = w.stats()
    print("| Window(span=\"1h\"), %d keys over the hour | bytes | bits a key |" % n)
    print("|---|---:|---:|")
    print("| %s, %d shards | %d | %.1f |" % (s["structure"], s["shards"], s["bytes"],
                                            s["bytes"] * 8 / n))


if __name__ == "__main__":
    main()
