"""stalls.py - what one command, or one line, costs where the work used to follow a size.

Usage: /usr/bin/python3 bench/stalls.py ONCE_CLI MODULE_SO [LINES] [DISTINCT]

Against Debian's redis-server with the module (tests/module/server.py, on loopback):
  - planning the smallest rate at large capacities: BF.RESERVE 1e-9 at 10^6, 10^9 and
    2^40 keys, BF.INSERT CAPACITY 10^9 ERROR 1e-9, BF.ADD after CONFIG SET of the same
    (accepted, or refused at the memory limit): each command's time, the client's round
    trip included, beside a PING of the same connection;
  - a sparse time window: ONCE.RESERVE SPAN 10 s CAPACITY 10^7, then 3,000 ONCE.ADD
    whose event times move the clock by half a tick on average, and 300 that move it a
    pass (ten ticks) or past the span;
  - a dense but slow time window: the same window, 20,000 ONCE.ADD of new keys 1 ms
    and 5 ms of event time apart (10,000 and 2,000 keys a span, far fewer than its
    capacity); then, on the first, pauses in the stream of 2, 5, 8, 9 and 30 s of
    event time, each followed by 2,000 keys 1 ms apart, five times each: the slowest
    ONCE.ADD after each pause.
  Each ONCE.ADD's own time in the server (SLOWLOG at a threshold of 0: p50, p99,
  p99.9, the slowest) and the client's round trip (p50, the slowest) beside PING's.
With the CLI on one day of LINES event-time lines (default 10^6, keys from 10^5):
  - `once [--filter timer] --span S --capacity C --time-field 1 --time-format epoch_ms
    -f 2` at S = 1 s and 10 s, C = 1,000 and 10^7, the tagged window (the default) and
    the timer filter: lines a second, beside `awk '!seen[$2]++'` (all time, exact: the
    cost of reading the lines) in the same run;
  - `once --error 1e-9` and `--error 1e-8` on DISTINCT distinct lines (default 2 x 10^7,
    all time, from a file of `seq`), three runs each: the fastest seconds, and their
    ratio.

Prints Markdown tables on stdout; progress on stderr.
"""
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "module"))


def timed(call):
    started = time.perf_counter()
    try:
        reply = call()
    except Exception as e:  # a refusal is an answer too
        reply = e
    return time.perf_counter() - started, reply


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def module_rows():
    from server import Server
    with Server() as s:
        r = s.client()
        ping = min(timed(r.ping)[0] for _ in range(200))
        print("| command | ms | reply |")
        print("|---|---:|---|")
        print("| PING (the round trip) | %.3f | PONG |" % (ping * 1e3))
        calls = [("BF.RESERVE", "a", "0.000000001", "1000000"),
                 ("BF.RESERVE", "b", "0.000000001", "1000000000"),
                 ("BF.RESERVE", "c", "0.000000001", str(1 << 40)),
                 ("BF.INSERT", "d", "CAPACITY", "1000000000", "ERROR", "0.000000001",
                  "ITEMS", "x")]
        for call in calls:
            took, reply = timed(lambda: r.execute_command(*call))
            print("| %s | %.3f | %s |" % (" ".join(call), took * 1e3, str(reply)[:40]))
        r.config_set("once.error-rate", "0.000000001")
        r.config_set("once.initial-capacity", "1000000000")
        took, reply = timed(lambda: r.execute_command("BF.ADD", "e", "x"))
        print("| BF.ADD e x (error-rate 1e-9, initial-capacity 1e9) | %.3f | %s |"
              % (took * 1e3, str(reply)[:40]))
        print()
        # SLOWLOG at a threshold of 0 keeps every command's own time (us), without the
        # client's round trip: the figure the 50 us target is about.
        r.config_set("slowlog-log-slower-than", 0)
        r.config_set("slowlog-max-len", 30000)
        series = []  # (label, client seconds, server us)

        def measure(label, calls):
            r.slowlog_reset()
            client = [timed(call)[0] for call in calls]
            server = [entry[2] for entry in r.execute_command("SLOWLOG", "GET", 30000)
                      if entry[3][0] == b"ONCE.ADD"]
            series.append((label, client, server))

        def add(key, item, at):
            return lambda: r.execute_command("ONCE.ADD", key, item, "AT", at)

        r.execute_command("ONCE.RESERVE", "w", "SPAN", 10000, "CAPACITY", 10000000)
        rng = random.Random(1)
        t, calls = 1700000000000, []
        for i in range(3000):
            t += rng.randrange(834)
            calls.append(add("w", "h%d" % i, t))
        measure("clock moved half a tick on average (3,000)", calls)
        calls = []
        for i in range(300):
            t += 8400 if i % 7 else 30000
            calls.append(add("w", "p%d" % i, t))
        measure("clock moved a pass or past the span (300)", calls)
        for gap, label in ((1, "a new key each 1 ms: 10,000 a span (20,000)"),
                           (5, "a new key each 5 ms: 2,000 a span (20,000)")):
            r.execute_command("ONCE.RESERVE", "d%d" % gap, "SPAN", 10000, "CAPACITY", 10000000)
            t = 1700000000000
            calls = [add("d%d" % gap, "k%d" % i, t + gap * (i + 1)) for i in range(20000)]
            measure(label, calls)
        pauses = {}
        t = 1700000000000 + 20000
        for round_ in range(5):
            for pause in (2000, 5000, 8000, 9000, 30000):
                t += pause
                r.slowlog_reset()
                r.execute_command("ONCE.ADD", "d1", "p%d-%d" % (round_, pause), "AT", t)
                took = r.execute_command("SLOWLOG", "GET", 1)[0][2]
                pauses[pause] = max(pauses.get(pause, 0), took)
                for i in range(2000):
                    t += 1
                    r.execute_command("ONCE.ADD", "d1", "q%d-%d-%d" % (round_, pause, i), "AT", t)
        r.config_set("slowlog-log-slower-than", 10000)
        print("| ONCE.ADD, CAPACITY 10^7, SPAN 10 s | p50 us | p99 us | p99.9 us | slowest us "
              "| client p50 ms | client slowest ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        print("| PING (the round trip) | | | | | %.3f | |" % (ping * 1e3))
        for label, client, server in series:
            print("| %s | %d | %d | %d | %d | %.3f | %.3f |"
                  % (label, percentile(server, 0.5), percentile(server, 0.99),
                     percentile(server, 0.999), max(server), percentile(client, 0.5) * 1e3,
                     max(client) * 1e3))
        print()
        print("| 10,000 keys a span, then a pause of | the write after it, slowest of 5, us |")
        print("|---|---:|")
        for pause, took in pauses.items():
            print("| %.0f s | %d |" % (pause / 1000, took))
        print()


def run(command, data):
    started = time.perf_counter()
    p = subprocess.run(command, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode())
    return time.perf_counter() - started, len(p.stdout.splitlines())


def cli_rows(once, lines):
    rng = random.Random(2)
    t = 1700000000000
    day = []
    for _ in range(lines):
        t += rng.randrange(2 * 86400000 // lines)
        day.append(b"%d\tk%d\n" % (t, rng.randrange(100000)))
    data = b"".join(day)
    print("| %d lines over a day | lines/s | seconds | printed |" % lines)
    print("|---|---:|---:|---:|")
    seconds, printed = run(["awk", "!seen[$2]++"], data)
    print("| awk '!seen[$2]++' (all time) | %.0f | %.2f | %d |" % (lines / seconds, seconds,
                                                                  printed))
    for structure in ([], ["--filter", "timer"]):
        for span in ("1s", "10s"):
            for capacity in ("1000", "10M"):
                seconds, printed = run([once, *structure, "--span", span, "--capacity",
                                        capacity, "--time-field", "1", "--time-format",
                                        "epoch_ms", "-f", "2"], data)
                print("| once %s--span %s --capacity %s | %.0f | %.2f | %d |"
                      % ("".join(w + " " for w in structure), span, capacity,
                         lines / seconds, seconds, printed), flush=True)
    print()


def error_rows(once, distinct):
    with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        subprocess.run(["seq", "1", str(distinct)], stdout=f, check=True)
        results = {}
        for error in ("1e-8", "1e-9"):
            best = None
            for _ in range(3):
                started = time.perf_counter()
                subprocess.run([once, "--error", error, f.name], stdout=subprocess.DEVNULL,
                               check=True)
                took = time.perf_counter() - started
                best = took if best is None or took < best else best
            results[error] = best
    print("| %d distinct lines, all time | seconds (best of 3) |" % distinct)
    print("|---|---:|")
    for error, seconds in results.items():
        print("| once --error %s | %.2f |" % (error, seconds))
    print("| ratio 1e-9 / 1e-8 | %.2fx |" % (results["1e-9"] / results["1e-8"]))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    once = os.path.abspath(sys.argv[1])
    os.environ["ONCE_MODULE"] = os.path.abspath(sys.argv[2])
    lines = int(float(sys.argv[3])) if len(sys.argv) > 3 else 1000000
    distinct = int(float(sys.argv[4])) if len(sys.argv) > 4 else 20000000
    module_rows()
    print("module: done", file=sys.stderr)
    cli_rows(once, lines)
    error_rows(once, distinct)


if __name__ == "__main__":
    main()
