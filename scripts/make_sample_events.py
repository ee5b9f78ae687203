#!/usr/bin/env python3
"""Generate data/events.tsv, the sample stream `make run` deduplicates.

A click stream as an at-least-once pipeline delivers it: tab-separated
    received_at (ISO-8601, UTC)  event_id  user  action  url
with the duplicates such pipelines make:
  - redeliveries: the same line again, a few seconds to minutes later
    (whole-line dedup removes these);
  - retries: the same event_id re-sent with a new received_at
    (only `once -f 2` removes these; whole-line dedup keeps them);
  - a few CRLF line endings from a Windows producer.
Deterministic (fixed seed), so the committed file can be regenerated exactly.
Usage: scripts/make_sample_events.py > data/events.tsv
"""
import datetime
import random
import sys

rng = random.Random(20261122)
EVENTS = 40000
START = datetime.datetime(2026, 11, 1, 8, 0, 0)
ACTIONS = ["view", "view", "view", "click", "click", "add_to_cart", "purchase", "search"]
PATHS = ["/", "/search", "/cart", "/checkout", "/account"] + [
    "/product/%d" % i for i in range(2000)]

users = ["u%06d" % rng.randrange(1000000) for _ in range(5000)]
out = []  # (sort time, line bytes)
t = 0.0
for i in range(EVENTS):
    t += rng.expovariate(5.0)  # about five events a second
    when = START + datetime.timedelta(seconds=t)
    event_id = "%016x" % rng.getrandbits(64)
    user = rng.choice(users)
    line = "\t".join([
        when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000),
        event_id, user, rng.choice(ACTIONS),
        "https://shop.example" + rng.choice(PATHS) + "?ref=%d" % rng.randrange(100)])
    out.append((t, line))
    r = rng.random()
    if r < 0.12:  # redelivered verbatim
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            out.append((t + rng.uniform(1, 300), line))
    elif r < 0.17:  # retried with a fresh receive time
        later = when + datetime.timedelta(seconds=rng.uniform(1, 120))
        fields = line.split("\t")
        fields[0] = later.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (later.microsecond // 1000)
        out.append((t + rng.uniform(1, 120), "\t".join(fields)))

out.sort(key=lambda x: x[0])
w = sys.stdout.buffer
for n, (_, line) in enumerate(out):
    w.write(line.encode() + (b"\r\n" if n % 997 == 0 else b"\n"))
