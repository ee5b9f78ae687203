"""cluster_bench.py - one filter over a Redis Cluster against the dedup users run today.

Usage: /usr/bin/python3 bench/cluster_bench.py ONCE_CLI MODULE_SO [EVENTS] [DISTINCT] [local|memory]

On clusters of 1 and 3 masters (Debian's redis-server with the module, on loopback,
started and stopped by tests/cluster/cluster.py), the same stream of EVENTS lines
(default 10^6) over DISTINCT keys (default 5 x 10^5, in a random order with repeats)
is deduped by:
  - `once --cluster` with whole slices (the default: 16 horizontal slices, each a filter
    of its own) and paper 000's cells: horizontal slicing (S = 3 and 12), vertical
    (S = 3) and diced h-v (3x2), 10^6 keys at 0.1%;
  - `SET key 1 NX EX 3600`, one command per event, pipelined 1,000 a node (the dedup
    users run today);
  - one BF key per master (RedisBloom's BF.* of the module), the keys partitioned by the
    client by CRC16 and sent as BF.MADD of 1,000;
  - with event times over one hour, `--span 1h`: whole slices, horizontal, vertical and
    diced h-v slices of timers, and one ONCE key per master (ONCE.MADD of 1,000, as the
    BF keys);
  - a count window of the last 10^5 lines delivered, `--window 100000`: whole slices
    (tagged windows on the shared count) and vertical slices of timers;
  - `once` alone in memory, `--threads 2`, all time, `--span 1h` and `--window 100000`:
    the rate a producer on the same machine is measured against (no server: its CPU
    column is 0).
Then, on 3 masters with a replica each, vertical slicing without and with --wait: the
cost of waiting for a replica after each batch.
For each: the server CPU (INFO cpu, user + sys, summed over the masters) per 10^6
events, commands per event, the client's events/s, the keys delivered, and the
events/s S masters would take if the server CPU is what bounds them; and messages an
event (requests to sites, paper 000's count) beside its model (S x 10^6 / CPU
seconds per 10^6 events, each master on its own core).  A 2-core machine cannot show
throughput growing with masters: the projection is from what does not depend on cores.

With `local` last, only the local filter's saving instead: on 3 masters, the same
stream deduped by one producer (so that every repeat is one of its own: producer
locality at its most) with vertical slicing, without and with --local-filter, its
server CPU and commands an event.

With `memory` last, the memory a time window takes instead: on 3 masters, DISTINCT
keys (each once) with event times spread over one hour, deduped with `--span 1h`,
capacity DISTINCT at 0.1%, by whole slices (16, each a tagged window), by slices of
timers (horizontal S = 16, vertical S = 3), by one node's ONCE window of the same span,
capacity and error (ONCE.MADD at each batch's time), and by SET NX EX 3600; a count
window of the last DISTINCT lines (`--window`): whole slices (16 tagged windows on the
shared count) and slices of timers against one node's ONCE window of WINDOW DISTINCT
(its default, the age-partitioned filter); and all time: whole slices (blocked)
against one node's BF of the same capacity and error.  The masters' used_memory
growth, in bits a key and against one node's.

Prints Markdown tables on stdout; progress on stderr.
"""
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "module"))


def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc16(key) % 16384


def server_cpu(cluster):
    total = 0.0
    for node in cluster.running():
        info = node.client().info("cpu")
        total += float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
    return total


def owners(cluster):
    """slot -> a client of the master serving it."""
    slots = [None] * 16384
    clients = {}
    for first, last, index in cluster.slot_map():
        clients.setdefault(index, cluster.nodes[index].client(decode=False))
        for s in range(first, last + 1):
            slots[s] = clients[index]
    return slots, clients


def sizing(args):
    """10^6 keys, but for a count window, whose N is its size."""
    return [] if "--window" in args else ["--capacity", "1000000"]


def run_once(cluster, once, name, args, data):
    command = [once, "--cluster", cluster.seeds()[0], "--key", name, *args, *sizing(args),
               "--error", "0.001", "--seed", "1", "--stats=json"]
    p = subprocess.run(command, input=data, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode())
    import json
    stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    return len(p.stdout.splitlines()), stats["commands"], stats


def run_set_nx(cluster, keys):
    slots, _ = owners(cluster)
    pipes = {}
    delivered = commands = 0
    pending = {}
    for k in keys:
        client = slots[key_slot(k)]
        p = pipes.setdefault(id(client), client.pipeline(transaction=False))
        p.set(k, 1, nx=True, ex=3600)
        pending[id(client)] = pending.get(id(client), 0) + 1
        if pending[id(client)] == 1000:
            delivered += sum(1 for r in p.execute() if r)
            commands += 1000
            pending[id(client)] = 0
    for cid, p in pipes.items():
        if pending.get(cid):
            delivered += sum(1 for r in p.execute() if r)
            commands += pending[cid]
    return delivered, commands, None


def key_per_master(cluster, prefix, reserve):
    """One key a master, `prefix{shardJ}` with the first J whose slot that master serves,
    made by reserve(client, name): [(name, client)], masters in order."""
    slots, clients = owners(cluster)
    shard_keys = []
    for index in sorted(clients):
        j = 0
        while True:
            name = b"%s{shard%d}" % (prefix, j)
            if slots[key_slot(name)] is clients[index]:
                break
            j += 1
        reserve(clients[index], name)
        shard_keys.append((name, clients[index]))
    return shard_keys


def run_bf_shards(cluster, keys, masters):
    # One BF key per master: a tag whose slot that master serves.
    shard_keys = key_per_master(cluster, b"bf", lambda client, name: client.execute_command(
        "BF.RESERVE", name, 0.001, 1000000 // masters + 1))
    batches = [[] for _ in shard_keys]
    delivered = commands = 0
    for k in keys:
        i = crc16(k) % len(shard_keys)
        batches[i].append(k)
        if len(batches[i]) == 1000:
            name, client = shard_keys[i]
            delivered += sum(client.execute_command("BF.MADD", name, *batches[i]))
            commands += 1
            batches[i] = []
    for i, b in enumerate(batches):
        if b:
            name, client = shard_keys[i]
            delivered += sum(client.execute_command("BF.MADD", name, *b))
            commands += 1
    return delivered, commands, None


def run_window_shards(cluster, stream, times, masters):
    """One node's module, a time window: one ONCE key per master (SPAN 1 h), the keys
    partitioned by the client by CRC16, ONCE.MADD of 1,000 at the first one's time."""
    shard_keys = key_per_master(cluster, b"win", lambda client, name: client.execute_command(
        "ONCE.RESERVE", name, "SPAN", 3600000, "CAPACITY", 1000000 // masters + 1, "ERROR",
        0.001))
    batches = [[] for _ in shard_keys]
    delivered = commands = 0

    def send(i):
        name, client = shard_keys[i]
        keys = [k for k, _ in batches[i]]
        return sum(client.execute_command("ONCE.MADD", name, "AT", batches[i][0][1], *keys))

    for k, t in zip(stream, times):
        i = crc16(k) % len(shard_keys)
        batches[i].append((k, t))
        if len(batches[i]) == 1000:
            delivered += send(i)
            commands += 1
            batches[i] = []
    for i, b in enumerate(batches):
        if b:
            delivered += send(i)
            commands += 1
    return delivered, commands, None


def run_in_memory(once, args, data):
    """`once` alone, in this process's host memory: the rate a producer is held to."""
    p = subprocess.run([once, *args, *sizing(args), "--error", "0.001"], input=data,
                       capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode())
    return len(p.stdout.splitlines()), 0, None


def used_memory(cluster):
    return sum(node.client().info("memory")["used_memory"] for node in cluster.running())


def one_node(cluster, reserve, add, keys, times):
    """A single key of the module on one master: `reserve` makes it, `add` (a command
    and its leading arguments, the time appended when `times`) takes 1,000 keys a
    call."""
    node = cluster.nodes[0].client(decode=False)
    node.execute_command(*reserve)
    for start in range(0, len(keys), 1000):
        batch = keys[start:start + 1000]
        args = list(add) + (["AT", times[start]] if times else [])
        node.execute_command(*args, *batch)


def memory_rows(once, distinct):
    from cluster import Cluster
    keys = [b"event:%d" % i for i in range(distinct)]
    hour = 3600 * 1000
    times = [i * hour // distinct for i in range(distinct)]
    timed = b"".join(b"%d\t%s\n" % (t, k) for t, k in zip(times, keys))
    plain = b"".join(k + b"\n" for k in keys)
    span = ["--span", "1h", "--time-field", "1", "--time-format", "epoch_ms", "-f", "2"]
    cap = ["--capacity", str(distinct), "--error", "0.001", "--seed", "1"]
    count = ["--window", str(distinct)]

    def cli(args, data, sizing=cap):
        def run(cluster):
            p = subprocess.run([once, "--cluster", cluster.seeds()[0], "--key", "m", *args,
                                *sizing], input=data, capture_output=True)
            if p.returncode != 0:
                raise RuntimeError(p.stderr.decode())
        return run

    rows = [
        ("span 1h", "whole slices (16 tagged windows, default lag 5 min)", cli(span, timed)),
        ("span 1h", "whole slices, --lag 0", cli([*span, "--lag", "0"], timed)),
        ("span 1h", "slices of timers, horizontal S=16", cli(["--slicing", "horizontal", "--slices", "16", *span], timed)),
        ("span 1h", "slices of timers, vertical S=3", cli(["--slicing", "vertical", "--slices", "3", *span], timed)),
        ("span 1h", "one node's ONCE window", lambda c: one_node(
            c, ["ONCE.RESERVE", "w", "SPAN", hour, "CAPACITY", distinct, "ERROR", "0.001"],
            ["ONCE.MADD", "w"], keys, times)),
        ("span 1h", "SET NX EX 3600", lambda c: run_set_nx(c, keys)),
        ("last 10^6 lines", "whole slices (16 tagged windows on the count)",
         cli(count, plain, cap[2:])),
        ("last 10^6 lines", "slices of timers, horizontal S=16",
         cli(["--slicing", "horizontal", "--slices", "16", *count], plain, cap[2:])),
        ("last 10^6 lines", "slices of timers, vertical S=3",
         cli(["--slicing", "vertical", "--slices", "3", *count], plain, cap[2:])),
        ("last 10^6 lines", "one node's ONCE window", lambda c: one_node(
            c, ["ONCE.RESERVE", "n", "WINDOW", distinct, "ERROR", "0.001"],
            ["ONCE.MADD", "n"], keys, None)),
        ("all time", "whole slices (16 blocked filters)", cli([], plain)),
        ("all time", "one node's BF", lambda c: one_node(
            c, ["BF.RESERVE", "b", "0.001", distinct], ["BF.MADD", "b"], keys, None)),
    ]
    print("| window | method | used_memory growth, MB | bits a key | against one node's |")
    print("|---|---|---:|---:|---:|")
    base = {}
    results = []
    for window, label, run in rows:
        with Cluster(masters=3) as cluster:
            before = used_memory(cluster)
            run(cluster)
            grown = used_memory(cluster) - before
        results.append((window, label, grown))
        if label.startswith("one node"):
            base[window] = grown
        print("%s, %s: done" % (window, label), file=sys.stderr)
    for window, label, grown in results:
        print("| %s | %s | %.1f | %.1f | %.2fx |" % (window, label, grown / 1e6,
                                                    grown * 8 / distinct, grown / base[window]),
              flush=True)


def message_model(stats, distinct):
    """Requests a site an event, by paper 000's count (section 3.2): horizontal 1; an
    event over S sites of k positions touches E = S (1 - (1 - 1/S)^k) of them (Eq. 3's
    occupancy), and with claims it tests them all, test-and-sets them again when it is
    new (a `distinct` share of events), and releases its claim (one more)."""
    if stats["slice_filter"] != "cells" and stats["window_unit"] == "events":
        return 1 + distinct  # whole slices of a count window: a test, a stamp if new
    if stats["slicing"] == "horizontal" and not stats["claims"]:
        return 1.0
    if stats["slicing"] == "horizontal":  # claims (a window): test, set if new, release
        return 1 + distinct + 1
    # diced h-v: an event's one slice, vertical over its parts; the others: vertical
    # over the slices (v-h then one part of each).
    sites = stats["parts"] if stats["slicing"] == "diced h-v" else stats["slices"]
    k = stats["hashes"]
    touched = sites * (1 - (1 - 1 / sites) ** k)
    return touched * (1 + distinct) + 1 if stats["claims"] else touched


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    once = os.path.abspath(sys.argv[1])
    os.environ["ONCE_MODULE"] = os.path.abspath(sys.argv[2])
    events = int(float(sys.argv[3])) if len(sys.argv) > 3 else 1000000
    distinct = int(float(sys.argv[4])) if len(sys.argv) > 4 else 500000
    from cluster import Cluster
    if len(sys.argv) > 5 and sys.argv[5] == "memory":
        memory_rows(once, distinct)
        return
    rng = random.Random(1)
    keys = [b"event:%d" % i for i in range(distinct)]
    stream = keys + [rng.choice(keys) for _ in range(events - distinct)]
    rng.shuffle(stream)
    data = b"".join(k + b"\n" for k in stream)
    # The same stream with event times over one hour, for the time-window rows.
    hour = 3600 * 1000
    times = [1700000000000 + i * hour // events for i in range(events)]
    timed = b"".join(b"%d\t%s\n" % (t, k) for t, k in zip(times, stream))
    span = ["--span", "1h", "--time-field", "1", "--time-format", "epoch_ms", "-f", "2"]
    window = ["--window", "100000"]
    if len(sys.argv) > 5 and sys.argv[5] == "local":
        print("| 3 masters, vertical S=3 | server CPU s / 10^6 events | commands / event | messages / event | client events/s | delivered |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, extra in (("shared filter only", []), ("--local-filter", ["--local-filter"])):
            with Cluster(masters=3) as cluster:
                before = server_cpu(cluster)
                started = time.monotonic()
                delivered, commands, stats = run_once(
                    cluster, once, "bench", ["--slicing", "vertical", "--slices", "3", *extra],
                    data)
                seconds = time.monotonic() - started
                cpu = server_cpu(cluster) - before
            print("| %s | %.2f | %.4f | %.3f | %.0f | %d |" % (
                label, cpu * 1e6 / events, commands / events, stats["messages"] / events,
                events / seconds, delivered), flush=True)
        return
    methods = [
        ("once whole slices S=16 (default)", lambda c, n: run_once(c, once, n, [], data)),
        ("once horizontal S=3", lambda c, n: run_once(c, once, n, ["--slicing", "horizontal", "--slices", "3"], data)),
        ("once horizontal S=12", lambda c, n: run_once(c, once, n, ["--slicing", "horizontal", "--slices", "12"], data)),
        ("once vertical S=3", lambda c, n: run_once(c, once, n, ["--slicing", "vertical", "--slices", "3"], data)),
        ("once diced h-v 3x2", lambda c, n: run_once(c, once, n, ["--slicing", "diced", "--slices", "3x2"], data)),
        ("SET NX EX, pipelined", lambda c, n: run_set_nx(c, stream)),
        ("BF key per master, BF.MADD", lambda c, n: run_bf_shards(c, stream, c.masters)),
        ("span 1h: once whole slices S=16 (default)", lambda c, n: run_once(c, once, n, span, timed)),
        ("span 1h: once horizontal S=3", lambda c, n: run_once(c, once, n, ["--slicing", "horizontal", "--slices", "3", *span], timed)),
        ("span 1h: once vertical S=3", lambda c, n: run_once(c, once, n, ["--slicing", "vertical", "--slices", "3", *span], timed)),
        ("span 1h: once diced h-v 3x2", lambda c, n: run_once(c, once, n, ["--slicing", "diced", "--slices", "3x2", *span], timed)),
        ("span 1h: ONCE key per master, ONCE.MADD", lambda c, n: run_window_shards(c, stream, times, c.masters)),
        ("window 10^5: once whole slices S=16 (default)", lambda c, n: run_once(c, once, n, window, data)),
        ("window 10^5: once vertical S=3", lambda c, n: run_once(c, once, n, ["--slicing", "vertical", "--slices", "3", *window], data)),
        ("in memory: once --threads 2", lambda c, n: run_in_memory(once, ["--threads", "2"], data)),
        ("in memory: once --span 1h --threads 2", lambda c, n: run_in_memory(once, [*span, "--threads", "2"], timed)),
        ("in memory: once --window 10^5 --threads 2", lambda c, n: run_in_memory(once, [*window, "--threads", "2"], data)),
    ]
    print("| masters | method | server CPU s / 10^6 events | commands / event | messages / event | model | client events/s | delivered | projected events/s at 3 masters | at 12 |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for masters in (1, 3):
        for label, run in methods:
            with Cluster(masters=masters) as cluster:
                before = server_cpu(cluster)
                started = time.monotonic()
                delivered, commands, stats = run(cluster, "bench")
                seconds = time.monotonic() - started
                cpu = server_cpu(cluster) - before
            per_million = cpu * 1e6 / events
            # `once` in memory has no server: nothing to project.
            project = lambda s: "%.0f" % (s * 1e6 / per_million) if not label.startswith("in memory") else "-"
            messages = model = "-" if label.startswith("in memory") else "1"
            if stats is not None:
                messages = "%.3f" % stats["messages_per_event"]
                model = "%.3f" % message_model(stats, delivered / events)
            print("| %d | %s | %.2f | %.4f | %s | %s | %.0f | %d | %s | %s |" % (
                masters, label, per_million, commands / events, messages, model,
                events / seconds, delivered, project(3), project(12)), flush=True)
            print("%d masters, %s: done" % (masters, label), file=sys.stderr)
    print()
    print("| 3 masters, 1 replica each | client events/s | commands / event | delivered |")
    print("|---|---:|---:|---:|")
    for label, extra in (("vertical S=3", []), ("vertical S=3 --wait", ["--wait"])):
        with Cluster(masters=3, replicas=1) as cluster:
            started = time.monotonic()
            delivered, commands, _ = run_once(cluster, once, "bench",
                                              ["--slicing", "vertical", "--slices", "3", *extra],
                                              data)
            seconds = time.monotonic() - started
        print("| %s | %.0f | %.4f | %d |" % (label, events / seconds, commands / events, delivered),
              flush=True)


if __name__ == "__main__":
    main()
