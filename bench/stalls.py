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
  - the first stream again on a table whose pages the server wrote before (200,000
    keys, then a move past the span that empties the table by writing it): what the
    kernel's first touch of a page costs, beside the server's minor page faults;
  - a dense but slow time window: the same window, 20,000 ONCE.ADD of new keys 1 ms
    and 5 ms of event time apart (10,000 and 2,000 keys a span, far fewer than its
    capacity);
  Each ONCE.ADD's own time in the server (SLOWLOG at a threshold of 0: p50, p99,
  p99.9, the slowest), the client's round trip (p50, the slowest) beside PING's, and
  the server's minor page faults a command.
  - pauses: the tagged window and the timer filter (FILTER timer) at 10^3, 10^4 and
    10^5 new keys a span, two spans of them, then pauses of 2, 5, 8, 9 and 30 s of
    event time, each followed by a fifth of a span's keys, three rounds: the slowest
    ONCE.ADD after each pause, the keys that expired in that move, and the write's
    time a key expired.
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
        r.config_set("once.error-rate", "0.01")  # the defaults again
        r.config_set("once.initial-capacity", "100")
        print()
        # SLOWLOG at a threshold of 0 keeps every command's own time (us), without the
        # client's round trip: the figure the 50 us target is about.
        r.config_set("slowlog-log-slower-than", 0)
        r.config_set("slowlog-max-len", 30000)
        series = []  # (label, client seconds, server us, minor page faults)

        def measure(label, calls):
            r.slowlog_reset()
            faults = minor_faults(s.pid)
            client = [timed(call)[0] for call in calls]
            faults = minor_faults(s.pid) - faults
            server = [entry[2] for entry in r.execute_command("SLOWLOG", "GET", 30000)
                      if entry[3][0] == b"ONCE.ADD"]
            series.append((label, client, server, faults))

        def add(key, item, at):
            return lambda: r.execute_command("ONCE.ADD", key, item, "AT", at)

        def half_tick_stream(key, t):
            rng, calls = random.Random(1), []
            for i in range(3000):
                t += rng.randrange(834)
                calls.append(add(key, "h%d" % i, t))
            return calls, t

        r.execute_command("ONCE.RESERVE", "w", "SPAN", 10000, "CAPACITY", 10000000)
        calls, t = half_tick_stream("w", 1700000000000)
        measure("clock moved half a tick on average (3,000)", calls)
        calls = []
        for i in range(300):
            t += 8400 if i % 7 else 30000
            calls.append(add("w", "p%d" % i, t))
        measure("clock moved a pass or past the span (300)", calls)
        # The same stream on a table whose pages the server has written before: 200,000
        # keys at one time, then a move past the span, which empties the table by
        # writing all of it (before the stream, not measured).
        r.execute_command("ONCE.RESERVE", "touched", "SPAN", 10000, "CAPACITY", 10000000)
        pipe = r.pipeline(transaction=False)
        for i in range(200000):
            pipe.execute_command("ONCE.ADD", "touched", "f%d" % i, "AT", 1699999900000)
            if i % 1000 == 999:
                pipe.execute()
        pipe.execute()
        r.execute_command("ONCE.ADD", "touched", "wipe", "AT", 1699999997000)
        calls, _ = half_tick_stream("touched", 1700000000000)
        measure("the same, on a table whose pages were written (3,000)", calls)
        for gap, label in ((1, "a new key each 1 ms: 10,000 a span (20,000)"),
                           (5, "a new key each 5 ms: 2,000 a span (20,000)")):
            r.execute_command("ONCE.RESERVE", "d%d" % gap, "SPAN", 10000, "CAPACITY", 10000000)
            t = 1700000000000
            calls = [add("d%d" % gap, "k%d" % i, t + gap * (i + 1)) for i in range(20000)]
            measure(label, calls)
        r.config_set("slowlog-log-slower-than", 10000)
        print("| ONCE.ADD, CAPACITY 10^7, SPAN 10 s | p50 us | p99 us | p99.9 us | slowest us "
              "| client p50 ms | client slowest ms | page faults a command |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        print("| PING (the round trip) | | | | | %.3f | | |" % (ping * 1e3))
        for label, client, server, faults in series:
            print("| %s | %d | %d | %d | %d | %.3f | %.3f | %.2f |"
                  % (label, percentile(server, 0.5), percentile(server, 0.99),
                     percentile(server, 0.999), max(server), percentile(client, 0.5) * 1e3,
                     max(client) * 1e3, faults / len(client)))
        print()
        pause_rows(r)


def minor_faults(pid):
    """The process's minor page faults so far (/proc/PID/stat, field 10)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


PAUSES = (2000, 5000, 8000, 9000, 30000)


def pause_rows(r):
    """For each window (tagged, timer) and rate (10^3, 10^4, 10^5 new keys a span of 10
    s, CAPACITY 10^7, ERROR 0.01): two spans of keys, then pauses of 2 to 30 s of event time, each
    followed by a fifth of a span's keys, three rounds.  The slowest ONCE.ADD after each
    pause (its own time, SLOWLOG), and the keys whose span ended in that move of the
    clock: what expired, against which the write's work is counted."""
    print("| window | keys a span | pause | the write after it, slowest of 3, us "
          "| keys expired by the move (mean) | ns a key expired |")
    print("|---|---:|---:|---:|---:|---:|")
    r.config_set("slowlog-log-slower-than", 0)
    span = 10000
    for kind in ("tagged", "timer"):
        for per_span in (1000, 10000, 100000):
            key = "pause-%s-%d" % (kind, per_span)
            extra = ["FILTER", "timer"] if kind == "timer" else []
            r.execute_command("ONCE.RESERVE", key, "SPAN", span, "CAPACITY", 10000000,
                              "ERROR", "0.01", *extra)
            gap = span / per_span
            t, times = 1700000000000.0, []

            def run_keys(prefix, n):
                nonlocal t
                pipe = r.pipeline(transaction=False)
                for i in range(n):
                    t += gap
                    times.append(int(t))
                    pipe.execute_command("ONCE.ADD", key, "%s-%d" % (prefix, i), "AT", int(t))
                    if i % 1000 == 999:
                        pipe.execute()
                pipe.execute()

            run_keys("fill", 2 * per_span)
            slowest, expired = {}, {}
            for round_ in range(3):
                for pause in PAUSES:
                    before = int(t)
                    t += pause
                    r.slowlog_reset()
                    r.execute_command("ONCE.ADD", key, "p%d-%d" % (round_, pause), "AT", int(t))
                    took = r.execute_command("SLOWLOG", "GET", 1)[0][2]
                    times.append(int(t))
                    gone = sum(1 for t0 in times if before < t0 + span <= int(t))
                    slowest[pause] = max(slowest.get(pause, 0), took)
                    expired[pause] = expired.get(pause, 0) + gone / 3
                    run_keys("q%d-%d" % (round_, pause), per_span // 5)
            for pause in PAUSES:
                print("| %s | %d | %.0f s | %d | %.0f | %.0f |"
                      % (kind, per_span, pause / 1000, slowest[pause], expired[pause],
                         slowest[pause] * 1000 / max(expired[pause], 1)))
            r.execute_command("DEL", key)
    r.config_set("slowlog-log-slower-than", 10000)
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
