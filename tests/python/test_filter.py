"""once.Filter: one key and many, dedup, what it holds, and what it refuses."""
import math
import random

import numpy
import pytest

import once


def test_a_new_key_is_added_once_and_then_found():
    f = once.Filter(capacity=1000, seed=1)
    assert f.add("click:42") is True
    assert f.add("click:42") is False
    assert "click:42" in f and f.contains("click:42")
    assert b"click:42" in f  # a str is its UTF-8 bytes
    assert "click:43" not in f
    assert f.add("é") and b"\xc3\xa9" in f
    assert f.add(b"\x00bin\x00ary") and bytearray(b"\x00bin\x00ary") in f
    assert memoryview(b"\x00bin\x00ary") in f
    assert len(f) == 3


def test_no_key_added_is_ever_missed_and_absent_ones_at_the_rate():
    f = once.Filter(capacity=20000, error=0.01, seed=2)
    keys = ["k%d" % i for i in range(20000)]
    assert sum(f.add_many(keys)) >= 19800  # new but for false positives
    assert all(f.contains_many(keys))
    absent = ["a%d" % i for i in range(100000)]
    found = sum(f.contains_many(absent))
    # binomial bound at 0.01 for 10^5 trials: mean 1000, sd 31.5; 5 sd above
    assert found <= 1000 + 5 * math.sqrt(100000 * 0.01 * 0.99), found


def test_batches_take_any_iterable_and_answer_as_one_key_calls():
    keys = ["x%d" % (i % 700) for i in range(2000)]
    one, many = once.Filter(seed=3), once.Filter(seed=3)
    expected = bytes(one.add(k) for k in keys)
    assert many.add_many(iter(keys)) == expected  # a generator: a repeat later is seen
    assert many.contains_many(tuple(keys)) == bytes(len(keys)) .replace(b"\0", b"\1")
    assert many.add_many([]) == b""
    assert bytes(many) == bytes(one)  # the same state


def test_arrays_of_fixed_width_keys():
    f = once.Filter(seed=4)
    strings = numpy.array([b"ab", b"c", b"ab", b"dddd"], dtype="S4")  # NUL padded
    assert f.add_many(strings) == b"\1\1\0\1"
    assert "c" in f and "dddd" in f  # an "S" item is its value, without the padding
    rows = numpy.frombuffer(b"abcdabcdwxyz", dtype=numpy.uint8).reshape(3, 4)
    assert f.add_many(rows) == b"\1\0\1"  # a row a key, every byte of it
    assert f.contains_many(memoryview(rows)) == b"\1\1\1"
    assert numpy.frombuffer(f.contains_many(["abcd", "zz"]), dtype=bool).tolist() == [True, False]


def test_dedup_yields_first_sightings_in_order():
    items = [{"id": i % 5, "n": i} for i in range(20)]
    got = list(once.Filter(seed=5).dedup(items, key=lambda item: str(item["id"])))
    assert [item["n"] for item in got] == [0, 1, 2, 3, 4]
    assert list(once.Filter(seed=5).dedup(["a", "b", "a", "c", "b"])) == ["a", "b", "c"]
    many = ["k%d" % (i % 9000) for i in range(30000)]  # across several batches
    assert list(once.Filter(seed=6).dedup(many)) == ["k%d" % i for i in range(9000)]


def test_cardinality_brackets_the_distinct_keys():
    f = once.Filter(capacity=100000, seed=7)
    rng = random.Random(7)
    keys = [str(rng.randrange(30000)) for _ in range(60000)]
    f.add_many(keys)
    distinct = len(set(keys))
    estimate, low, high = f.cardinality(confidence=0.99)
    assert low <= distinct <= high and low <= estimate <= high


def test_stats_say_what_the_filter_is():
    f = once.Filter(capacity=1000, error=0.001, seed=8)
    f.add_many(["a", "b"])
    s = f.stats()
    assert s["structure"] == "blocked" and s["capacity"] == 1000 and s["error"] == 0.001
    assert s["items"] == 2 and s["seed"] == 8 and s["bytes"] > 0
    assert "blocked" in repr(f) and once.Filter().stats()["structure"] == "scalable"
    assert once.Filter(filter="standard", capacity=10).stats()["structure"] == "standard"


def test_wrong_keys_and_options_raise_and_change_nothing():
    f = once.Filter(capacity=100, seed=9)
    f.add("kept")
    before = bytes(f)
    for bad in (3, None, 1.5, ["list"], object()):
        with pytest.raises(TypeError):
            f.add(bad)
    with pytest.raises(TypeError):
        f.add_many("a string is one key")
    with pytest.raises(TypeError):
        f.add_many(["ok", 7])
    with pytest.raises(TypeError):
        f.add_many(numpy.zeros((2, 2, 2), dtype=numpy.uint8))
    assert bytes(f) == before and "kept" in f
    with pytest.raises(ValueError, match="invalid error rate '2'"):
        once.Filter(error=2)
    with pytest.raises(ValueError, match="capacity"):
        once.Filter(capacity=0)
    with pytest.raises(ValueError, match="no-such"):
        once.Filter(filter="no-such")
    with pytest.raises(ValueError, match="--filter tagged needs --span"):
        once.Filter(filter="tagged")


def test_a_memory_cap_refuses_with_full_error():
    f = once.Filter(filter="scalable", capacity=1000, max_memory="64K", seed=10, error=0.01)
    with pytest.raises(once.FullError):
        for i in range(200):
            f.add_many(["k%d-%d" % (i, j) for j in range(1000)])
    assert f.stats()["bytes"] <= 64 * 1024
    assert "k0-0" in f
