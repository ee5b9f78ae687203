"""once.Window: time windows on event times, count windows, and times refused."""
import datetime
import pickle

import pytest

import once


def test_a_time_window_forgets_a_key_after_its_span():
    w = once.Window(span="10s", seed=1)
    assert w.add("k", at=1000) and not w.add("k", at=1009.9)
    assert w.contains("k", at=1009.999)
    # forgotten within a tick (a twelfth of the span) past it
    assert not w.contains("k", at=1000 + 10 + 10 / 12 + 0.02)
    assert w.add("k", at=1011)
    assert w.clock == 1011


def test_no_key_is_missed_inside_its_span():
    w = once.Window(span="1m", capacity=5000, seed=2)
    delivered = {}
    t = 1_700_000_000.0
    for i in range(20000):
        t += 0.01
        key = "k%d" % (i * 7919 % 3000)
        new = w.add(key, at=t)
        if key in delivered and t - delivered[key] < 60:
            assert not new, (key, t - delivered[key])
        if new:
            delivered[key] = t


def test_times_as_seconds_datetimes_or_one_each():
    w = once.Window(span="1h", seed=3)
    at = datetime.datetime(2026, 12, 7, 12, 0, tzinfo=datetime.timezone.utc)
    assert w.add("a", at=at)
    assert w.clock == at.timestamp()
    with pytest.raises(ValueError, match="time zone"):
        w.add("b", at=datetime.datetime(2026, 12, 7, 12, 0))
    base = at.timestamp()
    assert w.add_many(["b", "c", "b"], at=[base + 1, base + 2, base + 3]) == b"\1\1\0"
    assert w.contains_many(["a", "b", "z"], at=base + 4) == b"\1\1\0"
    with pytest.raises(ValueError, match="3 times for 2 keys"):
        w.add_many(["d", "e"], at=[base, base, base])
    with pytest.raises(TypeError):
        w.add("d", at="noon")
    with pytest.raises(ValueError):
        w.add("d", at=-1)


def test_a_window_without_times_reads_the_wall_clock_or_asks_for_them():
    w = once.Window(span="1h", seed=4)
    assert w.add("now") and "now" in w
    assert abs(w.clock - __import__("time").time()) < 60
    e = once.Window(span="1h", seed=4, time="event")
    with pytest.raises(ValueError, match="at="):
        e.add("no time")
    e.add("then", at=1000)
    assert "then" in e and e.contains("then") and not e.contains("then", at=5000)
    assert pickle.loads(pickle.dumps(e)).contains("then")
    with pytest.raises(ValueError, match="time is"):
        once.Window(span="1h", time="sundial")


def test_an_event_far_ahead_of_the_clock_is_refused():
    w = once.Window(span="1m", seed=5, max_time_jump="1h", time="event")
    w.add("a", at=1000)
    with pytest.raises(once.TimeRefusedError):
        w.add("b", at=1000 + 7200)
    assert w.clock == 1000 and "b" not in w


def test_a_lag_judges_late_events_at_their_own_time():
    w = once.Window(span="1m", lag="1m", seed=6)
    w.add("late", at=1000)
    w.add("clock", at=1100)  # the clock moves past late's span
    assert not w.add("late", at=1050)  # judged at 1050: within the span of its delivery


def test_a_count_window_keeps_the_last_n_keys():
    w = once.Window(count=1000, seed=7)
    assert w.add_many(["k%d" % i for i in range(1000)]) == b"\1" * 1000
    assert w.contains_many(["k%d" % i for i in range(1000)]) == b"\1" * 1000
    w.add_many(["m%d" % i for i in range(5000)])
    s = w.stats()
    assert s["structure"] == "apbf" and s["window"] == 1000
    assert sum(w.contains_many(["k%d" % i for i in range(1000)])) < 100


def test_window_options_are_the_clis():
    assert once.Window(span=90, seed=1).stats()["span_ms"] == 90000
    assert once.Window(span="1h", filter="timer", seed=1).stats()["structure"] == "timer"
    assert once.Window(span="1h", refresh=True, seed=1).stats()["structure"] == "tagged"
    with pytest.raises(ValueError, match="one of them"):
        once.Window()
    with pytest.raises(ValueError, match="span"):
        once.Window(span="soon")
    with pytest.raises(ValueError, match="--lag"):
        once.Window(span="1m", lag="3m")
