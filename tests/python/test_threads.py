"""Threads: batches let other threads run, and threads sharing a filter lose nothing."""
import threading

import numpy

import once


def test_a_batch_lets_other_threads_run():
    f = once.Filter(capacity=4_000_000, seed=1)
    keys = numpy.arange(4_000_000, dtype=numpy.uint64).view(numpy.uint8).reshape(-1, 8)
    f.add_many(keys[:1000])  # warm
    counted = [0]
    done = threading.Event()

    def batch():
        f.add_many(keys)
        done.set()

    worker = threading.Thread(target=batch)
    worker.start()
    while not done.is_set():  # runs only while the batch has let go of the GIL
        counted[0] += 1
    worker.join(timeout=120)
    assert counted[0] > 50, counted[0]


def test_threads_sharing_a_filter_deliver_each_key_once():
    f = once.Filter(capacity=200_000, error=0.001, seed=2)
    keys = ["k%d" % i for i in range(100_000)]
    answers = [None] * 4

    def run(i):
        mine = keys[i::2] + keys  # every thread offers every key, in another order
        answers[i] = sum(f.add_many(mine[j:j + 5000]).count(1)
                         for j in range(0, len(mine), 5000))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    new = sum(answers)
    # each key new to exactly one thread, less the false positives (0.001: mean 100)
    assert 100_000 - 300 <= new <= 100_000, new
    assert all(f.contains_many(keys))


def test_one_key_calls_and_batches_from_threads():
    w = once.Window(span="1h", seed=3)
    errors = []

    def adds(base):
        try:
            for i in range(2000):
                w.add("t%d-%d" % (base, i), at=1000 + i / 100)
                w.add_many(["b%d-%d" % (base, i)], at=1000 + i / 100)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=adds, args=(b,)) for b in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert all(w.contains_many(["t%d-%d" % (b, i) for b in range(3) for i in range(2000)],
                               at=1020))
