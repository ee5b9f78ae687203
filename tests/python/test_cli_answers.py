"""The same answers as the CLI on the same input, options and seed."""
import random

import once
from conftest import run_cli


def test_an_all_time_filter_prints_what_the_cli_prints():
    rng = random.Random(1)
    keys = ["u%d" % rng.randrange(30000) for _ in range(50000)]
    data = b"".join(k.encode() + b"\n" for k in keys)
    for options, kwargs in ((["--capacity", "20000", "--error", "0.05"],
                             {"capacity": 20000, "error": 0.05}),
                            (["--error", "0.01"], {"error": 0.01})):
        cli = [line.decode() for line in run_cli(*options, "--seed", "11", data=data)]
        assert list(once.Filter(seed=11, **kwargs).dedup(keys)) == cli, options


def test_a_time_window_prints_what_the_cli_prints_on_event_times():
    rng = random.Random(2)
    t, events = 1_700_000_000_000, []
    for _ in range(40000):
        t += rng.randrange(20)
        events.append((t, "e%d" % rng.randrange(5000)))
    data = b"".join(b"%d\t%s\n" % (ms, key.encode()) for ms, key in events)
    for span, kwargs in (("10s", {}), ("2s", {"capacity": 1000, "error": 0.02})):
        options = ["--span", span, "--seed", "12", "--time-field", "1", "--time-format",
                   "epoch_ms", "-f", "2"]
        for name in ("capacity", "error"):
            if name in kwargs:
                options += ["--" + name, str(kwargs[name])]
        cli = run_cli(*options, data=data)
        w = once.Window(span=span, seed=12, **kwargs)
        mine = [b"%d\t%s" % (ms, key.encode())
                for ms, key in w.dedup(events, key=lambda e: e[1], at=lambda e: e[0] / 1000)]
        assert mine == cli, span


def test_a_count_window_prints_what_the_cli_prints():
    rng = random.Random(3)
    keys = ["c%d" % rng.randrange(3000) for _ in range(30000)]
    data = b"".join(k.encode() + b"\n" for k in keys)
    cli = [line.decode() for line in run_cli("--window", "1000", "--seed", "13", data=data)]
    assert list(once.Window(count=1000, seed=13).dedup(keys)) == cli
