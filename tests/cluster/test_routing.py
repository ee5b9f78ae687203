"""The routing layer (cluster/routing.h) over real Redis Clusters (cluster.py),
through routing_driver (routing_driver.c): keys reach the master that serves their slot,
whose number is the server's own; moved and migrating slots are followed; a dead master
costs its own keys only, backs off as configured, and its keys come back with it or with
the replica promoted in its place; a frozen master times out without leaving stale
replies behind.  Waits for a state poll with a deadline.
"""
import os
import random
import socket
import subprocess
import threading
import time
from collections import namedtuple

from cluster import Cluster, info_fields, wait_for

Result = namedtuple("Result", "status node reply")


def esc(data):
    """An argument or string as routing_driver writes and reads it."""
    if isinstance(data, str):
        data = data.encode()
    return "".join(chr(b) if 0x21 <= b <= 0x7e and b not in b"\\,[]" else "\\x%02x" % b
                   for b in data)


def string(data):
    """A string reply as the driver prints it."""
    return "$" + esc(data)


class Driver:
    """routing_driver over a cluster: one client for the driver's life."""

    def __init__(self, seeds, timeout_ms=None, redirects=None, retry_ms=None,
                 max_retry_ms=None, manual_clock=False):
        args = [os.environ["ONCE_ROUTING_DRIVER"]]
        for flag, value in (("--timeout", timeout_ms), ("--redirects", redirects),
                            ("--retry", retry_ms), ("--max-retry", max_retry_ms)):
            if value is not None:
                args += [flag, str(value)]
        if manual_clock:
            args.append("--manual-clock")
        self.proc = subprocess.Popen(args + list(seeds), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self.readline()
        assert line == "ready", line

    def readline(self):
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("routing_driver ended (status %s)" % self.proc.wait())
        return line.rstrip("\n")

    def send(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def run(self, commands):
        """Run a batch: [Result], and the run's time in seconds."""
        for command in commands:
            self.send(" ".join(esc(arg) for arg in command))
        self.send("")
        results = []
        for _ in commands:
            fields = self.readline().split(" ", 2)
            results.append(Result(fields[0], int(fields[1]),
                                  fields[2] if len(fields) > 2 else None))
        done = self.readline().split()
        assert done[0] == "done", done
        return results, int(done[1]) / 1e6

    def slots(self, keys):
        self.send(":slot " + " ".join(esc(key) for key in keys))
        fields = self.readline().split()
        assert fields[0] == "slot" and len(fields) == len(keys) + 1, fields
        return [int(f) for f in fields[1:]]

    def stats(self):
        self.send(":stats")
        fields = self.readline().split()
        assert fields[0] == "stats", fields
        return {name: int(value) for name, value in (f.split("=") for f in fields[1:])}

    def nodes(self):
        """[(address, up, messages, slots)] by node index."""
        self.send(":nodes")
        nodes = []
        while True:
            fields = self.readline().split()
            if fields[0] == "done":
                return nodes
            assert int(fields[1]) == len(nodes), fields
            nodes.append((fields[2], fields[3] == "up", int(fields[4]), int(fields[5])))

    def node_index(self, cluster, index):
        """The driver's index of a cluster node (cluster.nodes[index])."""
        address = "127.0.0.1:%d" % cluster.nodes[index].port
        return [n[0] for n in self.nodes()].index(address)

    def advance(self, ms):
        self.send(":advance %d" % ms)
        assert self.readline() == "ok"

    def load(self, prefix, count, batch, verb):
        self.send(":load %s %d %d %s" % (prefix, count, batch, verb))
        fields = self.readline().split()
        assert fields[0] == "load", fields
        return {name: int(value) for name, value in (f.split("=") for f in fields[1:])}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """End of input: the driver frees the client and must exit 0 (in the sanitizer
        build, also without a leak)."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            assert self.proc.wait(timeout=60) == 0
        self.proc.stdout.close()


def batches(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


def gets(keys):
    return [["GET", key] for key in keys]


def value_of(key):
    """A key's value, as routing_driver's :load writes it too."""
    return b"v:" + (key.encode() if isinstance(key, str) else key)


def keys_back(driver, keys):
    """One round of GETs of keys loaded with their values (value_of) while a node is
    away: every answer is the key's value or UNREACHABLE, never another.  (Whether all
    are back, the results.)"""
    results, _ = driver.run(gets(keys))
    for key, r in zip(keys, results):
        assert r.status == "U" or r.reply == string(value_of(key)), (key, r)
    return all(r.reply == string(value_of(k)) for k, r in zip(keys, results)), results


def owners(cluster, driver, keys):
    """The driver's index of the node serving each key now, as the cluster says."""
    ranges = [(first, last, driver.node_index(cluster, index))
              for first, last, index in cluster.slot_map()]
    result = []
    for slot in driver.slots(keys):
        result += [node for first, last, node in ranges if first <= slot <= last]
    assert len(result) == len(keys)
    return result


def test_keys_spread_over_three_masters():
    with Cluster(masters=3) as cluster, Driver(cluster.seeds()[:1]) as driver:
        keys = (["key:%d" % i for i in range(500)]
                + ["{tag%d}:%d" % (i // 10, i) for i in range(500)]
                + [b"bin\x00\xff %d\n{" % i for i in range(50)])
        for chunk in batches(keys, 100):
            results, _ = driver.run([["SET", key, value_of(key)] for key in chunk])
            assert all(r == Result("R", r.node, "+OK") for r in results), results
        expected_nodes = owners(cluster, driver, keys)
        served = set()
        for chunk, nodes in zip(batches(keys, 100), batches(expected_nodes, 100)):
            results, _ = driver.run(gets(chunk))
            for key, node, r in zip(chunk, nodes, results):
                assert r == Result("R", node, string(value_of(key))), (key, r, node)
                served.add(node)
        assert len(served) == 3
        # Straight to each key's master, one message a command (and the map read).
        stats = driver.stats()
        assert stats["moved"] == stats["ask"] == stats["unreachable"] == 0, stats
        assert stats["messages"] == 2 * len(keys) + 1, stats
        assert stats["replies"] == stats["messages"], stats
        assert sorted(n[3] for n in driver.nodes()) == [5461, 5461, 5462]

        # Error replies other than redirections are replies; keyless commands go to
        # any master; commands on one key run in the order given.
        results, _ = driver.run([["SET", "str", "x"], ["INCR", "str"], ["LPUSH", "str", "a"],
                                 ["NOSUCHCOMMAND", "str"], ["PING"],
                                 ["SET", "seq", "1"], ["APPEND", "seq", "2"],
                                 ["APPEND", "seq", "3"], ["GET", "seq"], ["DEL", "seq"],
                                 ["GET", "seq"]])
        assert [r.status for r in results] == ["R"] * 11, results
        assert results[1].reply.startswith("-ERR\\x20value\\x20is\\x20not"), results[1]
        assert results[2].reply.startswith("-WRONGTYPE"), results[2]
        assert results[3].reply.startswith("-ERR\\x20unknown\\x20command"), results[3]
        assert results[4].reply == "+PONG"
        assert [r.reply for r in results[5:]] == ["+OK", ":2", ":3", "$123", ":1", "_"]
        if os.environ.get("ONCE_MODULE"):
            # The module's own errors and replies, through the routing.
            results, _ = driver.run([["BF.RESERVE", "bf", "nonsense", "100"],
                                     ["BF.ADD", "bf", "item"], ["BF.EXISTS", "bf", "item"],
                                     ["BF.ADD", "str", "item"]])
            assert results[0].reply.startswith("-ERR"), results[0]
            assert [r.reply for r in results[1:3]] == [":1", ":1"], results
            assert results[3].reply.startswith("-WRONGTYPE"), results[3]

        # Slots as the server computes them, hash tags and binary keys included.
        edge = [b"", b"{}", b"{", b"}", b"}{", b"{}{a}", b"a{b}c{d}", b"{{a}}", b"a{}b",
                b"{a", b"a}b{c}", b"{a}", b"{user1000}.following", b"foo{}{bar}",
                b"foo{{bar}}zap", b"foo{bar}{zap}", b"123456789", b"\x00", b"{\x00}",
                b"\xff{\xfe}\xfd", b"{\xff", b"{ }", b"{}}", bytes(range(256))]
        rng = random.Random(int(os.environ.get("ONCE_TEST_SEED", "1")))
        alphabet = b"{}ab\x00\xff x"
        edge += [bytes(rng.choice(alphabet) for _ in range(rng.randrange(12)))
                 for _ in range(200)]
        edge += [bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for _ in range(100)]
        server = cluster.nodes[0].client(decode=False)
        for chunk in batches(edge, 50):
            expected = [int(server.execute_command("CLUSTER", "KEYSLOT", key)) for key in chunk]
            assert driver.slots(chunk) == expected, chunk
        assert driver.slots([b"123456789"]) == [0x31C3 % 16384]


def test_moved_slot_is_followed():
    with Cluster(masters=3) as cluster, Driver(cluster.seeds()) as driver:
        keys = ["{moving}:%d" % i for i in range(50)] + ["other:%d" % i for i in range(250)]
        for chunk in batches(keys, 100):
            results, _ = driver.run([["SET", key, value_of(key)] for key in chunk])
            assert all(r.reply == "+OK" for r in results), results
        slot = cluster.keyslot("{moving}")
        source = cluster.owner(slot)
        target = (source + 1) % 3
        cluster.move_slot(slot, target)
        before = driver.stats()

        # The map is stale: the slot's commands are redirected, all reply right.
        expected = owners(cluster, driver, keys)
        results, _ = driver.run(gets(keys))
        for key, node, r in zip(keys, expected, results):
            assert r == Result("R", node, string(value_of(key))), (key, r)
        assert all(r.node == driver.node_index(cluster, target) for r in results[:50])
        after = driver.stats()
        assert after["moved"] - before["moved"] == 50, (before, after)
        assert after["unreachable"] == 0

        # The map was read again before the next run: no more redirections.
        results, _ = driver.run(gets(keys) + [["SET", "{moving}:new", "n"]])
        assert all(r.status == "R" for r in results)
        final = driver.stats()
        assert final["moved"] == after["moved"], (after, final)
        assert final["map_refreshes"] == after["map_refreshes"] + 1, (after, final)
        assert cluster.nodes[target].client().get("{moving}:new") == "n"


def test_ask_during_migration():
    with Cluster(masters=3) as cluster, Driver(cluster.seeds()) as driver:
        keys = ["{asking}:%d" % i for i in range(100)]
        results, _ = driver.run([["SET", key, value_of(key)] for key in keys])
        assert all(r.reply == "+OK" for r in results), results
        slot = cluster.keyslot("{asking}")
        source = cluster.owner(slot)
        target = (source + 1) % 3
        migrated = {k.decode() for k in cluster.begin_move_slot(slot, target, migrate=40)}
        assert len(migrated) == 40
        assert len(cluster.keys_in_slot(source, slot)) == 60
        source_index = driver.node_index(cluster, source)
        target_index = driver.node_index(cluster, target)
        before = driver.stats()

        # Keys already migrated are answered by the target after ASK; the others by
        # the source; the map does not change.
        results, _ = driver.run(gets(keys))
        for key, r in zip(keys, results):
            node = target_index if key in migrated else source_index
            assert r == Result("R", node, string(value_of(key))), (key, r)
        after = driver.stats()
        assert after["ask"] - before["ask"] == 40, (before, after)
        assert after["moved"] == before["moved"] and after["unreachable"] == 0
        assert after["map_refreshes"] == before["map_refreshes"]

        # New keys of the migrating slot go to the target (ASK), and stay readable.
        new = ["{asking}:new:%d" % i for i in range(20)]
        results, _ = driver.run([["SET", key, value_of(key)] for key in new] + gets(new))
        assert all(r.status == "R" and r.node == target_index for r in results), results
        assert [r.reply for r in results[20:]] == [string(value_of(key)) for key in new]
        on_target = {k.decode() for k in cluster.keys_in_slot(target, slot)}
        assert set(new) <= on_target

        cluster.finish_move_slot(slot)
        results, _ = driver.run(gets(keys + new))
        assert all(r == Result("R", target_index, string(value_of(key)))
                   for key, r in zip(keys + new, results)), results
        assert driver.stats()["moved"] > after["moved"]


def split_by_node(results, keys, dead):
    """Check a GET batch over a cluster with node `dead` (the driver's index) down: its
    keys UNREACHABLE, every other key right.  Returns the count of UNREACHABLE."""
    lost = 0
    for key, r in zip(keys, results):
        if r.node == dead:
            assert r == Result("U", dead, None), (key, r)
            lost += 1
        else:
            assert r == Result("R", r.node, string(value_of(key))), (key, r)
    return lost


def wait_node_ok(cluster, index):
    """When the node first says cluster_state:ok (time.monotonic())."""
    node = cluster.nodes[index]
    wait_for("%r to say cluster_state:ok" % node, lambda: None if info_fields(
        node.call("CLUSTER", "INFO")).get("cluster_state") == "ok" else "not ok",
        interval=0.005)
    return time.monotonic()


def test_killed_master_is_unreachable_then_back():
    timeout_ms, max_retry_ms = 1000, 1000
    # The keys survive the kill in the AOF.
    cluster = Cluster(masters=3, extra=("--appendonly", "yes"))
    driver = manual = None
    try:
        driver = Driver(cluster.seeds(), timeout_ms=timeout_ms, retry_ms=100,
                        max_retry_ms=max_retry_ms)
        manual = Driver(cluster.seeds(), timeout_ms=timeout_ms, retry_ms=100,
                        max_retry_ms=max_retry_ms, manual_clock=True)
        load = driver.load("k", 600, 100, "both")
        assert load["replied"] == 1200 and load["wrong"] == 0, load
        keys = ["k%d" % i for i in range(600)]
        victim = 1
        dead = driver.node_index(cluster, victim)
        dead_manual = manual.node_index(cluster, victim)
        expected = owners(cluster, driver, keys)
        lost_keys = expected.count(dead)
        assert 100 < lost_keys < 300
        results, _ = manual.run(gets(keys))
        assert all(r.status == "R" for r in results)

        cluster.kill(victim)
        # The first batch finds the node gone; every later one gives its keys back at
        # once (no connection attempt while the backoff lasts) and the rest replied.
        times = []
        for _ in range(20):
            for chunk in batches(keys, 100):
                results, took = driver.run(gets(chunk))
                split_by_node(results, chunk, dead)
                times.append(took)
        slow = [t for t in times[1:] if t > timeout_ms / 4000]
        print("first batch %.1f ms, then at most %.1f ms" % (1e3 * times[0], 1e3 * max(times[1:])))
        assert not slow, (times[0], slow)
        assert sum(1 for r in results if r.status == "U") > 0
        assert not driver.nodes()[dead][1]

        # The backoff on the client's clock: retry_ms, doubling, up to max_retry_ms; no
        # connection attempt before it passes, one after.
        results, _ = manual.run(gets(keys))
        assert split_by_node(results, keys, dead_manual) == lost_keys
        for backoff in (100, 200, 400, 800, 1000, 1000):
            attempts = manual.stats()["reconnects"]
            for _ in range(3):
                results, _ = manual.run(gets(keys))
                assert split_by_node(results, keys, dead_manual) == lost_keys
            manual.advance(backoff - 1)
            results, _ = manual.run(gets(keys))
            assert split_by_node(results, keys, dead_manual) == lost_keys
            assert manual.stats()["reconnects"] == attempts, backoff
            manual.advance(1)
            results, _ = manual.run(gets(keys))
            assert split_by_node(results, keys, dead_manual) == lost_keys
            assert manual.stats()["reconnects"] == attempts + 1, backoff

        # Back: the client, running all along, reads the keys the node held again
        # within its backoff (at most max_retry_ms) of the node saying cluster_state:ok
        # (a restarted master says CLUSTERDOWN for its first seconds: UNREACHABLE then),
        # which a thread watches meanwhile.
        cluster.restart(victim)
        ok_at = []
        watch = threading.Thread(target=lambda: ok_at.append(wait_node_ok(cluster, victim)))
        watch.start()
        try:
            deadline = time.monotonic() + 90
            while not keys_back(driver, keys)[0]:
                assert time.monotonic() < deadline, "the restarted node's keys are not back"
                time.sleep(0.01)
            back = time.monotonic()
        finally:
            watch.join()
        assert ok_at, "the restarted node never said cluster_state:ok"
        print("keys back %.3f s after the node was ok" % (back - ok_at[0]))
        assert back - ok_at[0] < (max_retry_ms + 1500) / 1000, back - ok_at[0]
        assert driver.nodes()[dead][1]
        manual.advance(max_retry_ms)
        results, _ = manual.run(gets(keys))
        assert all(r.reply == string(value_of(k)) for k, r in zip(keys, results)), results
    finally:
        for d in (driver, manual):
            if d:
                d.close()
        cluster.stop()


def test_failover_to_replica():
    max_retry_ms = 1000
    with (Cluster(masters=3, replicas=1) as cluster,
          Driver(cluster.seeds(), max_retry_ms=max_retry_ms) as driver):
        load = driver.load("f", 600, 100, "both")
        assert load["replied"] == 1200 and load["wrong"] == 0, load
        cluster.wait_replicated()
        keys = ["f%d" % i for i in range(600)]
        victim = 0
        replica = cluster.replicas_of(victim)[0]
        dead = driver.node_index(cluster, victim)
        lost = [k for k, node in zip(keys, owners(cluster, driver, keys)) if node == dead]
        refreshes = driver.stats()["map_refreshes"]

        cluster.kill(victim)
        # Until the replica is promoted its keys are UNREACHABLE; once the cluster says
        # it serves them, the same client finds it within about max_retry_ms.
        promoted = None
        deadline = time.monotonic() + 90
        while True:
            back, results = keys_back(driver, keys)
            if back:
                break
            if promoted is None and cluster.owner(0) == replica:
                promoted = time.monotonic()
            assert time.monotonic() < deadline, "the client did not follow the failover"
            time.sleep(0.01)
        replied = time.monotonic()
        if promoted is not None:  # (else followed before the harness saw the promotion)
            print("keys back %.3f s after the promotion" % (replied - promoted))
            assert replied - promoted < (max_retry_ms + 2000) / 1000, replied - promoted
        new_master = driver.node_index(cluster, replica)
        for key, r in zip(keys, results):
            if key in lost:
                assert r.node == new_master, (key, r)
        stats = driver.stats()
        assert stats["map_refreshes"] > refreshes and stats["unreachable"] > 0, stats
        nodes = driver.nodes()
        assert not nodes[dead][1] and nodes[new_master][3] == 5461, nodes


def test_frozen_master_times_out_without_stale_replies():
    # A backoff longer than the test's own steps take, however busy the machine.
    timeout_ms, retry_ms = 500, 2000
    with (Cluster(masters=3) as cluster,
          Driver(cluster.seeds(), timeout_ms=timeout_ms, retry_ms=retry_ms,
                 max_retry_ms=2 * retry_ms) as driver):
        load = driver.load("z", 300, 100, "both")
        assert load["replied"] == 600 and load["wrong"] == 0, load
        keys = ["z%d" % i for i in range(300)]
        victim = 2
        frozen = driver.node_index(cluster, victim)

        cluster.freeze(victim)
        # The frozen node accepts the pipeline and answers nothing: the run waits
        # timeout_ms for it, then drops the connection with its commands in it.
        results, took = driver.run(gets(keys))
        split_by_node(results, keys, frozen)
        assert took >= timeout_ms / 1000, took
        # The next run, within the backoff, does not wait for it.
        results, took = driver.run(gets(keys))
        assert split_by_node(results, keys, frozen) > 0
        assert took < timeout_ms / 2000, took

        # Thawed, it answers what was sent to it before on a connection the client no
        # longer reads: every reply the client gets is its own command's.
        cluster.thaw(victim)
        shuffled = list(reversed(keys))

        def all_right():
            results, _ = driver.run(gets(shuffled))
            wrong = [(k, r) for k, r in zip(shuffled, results) if r.status == "R"
                     and r.reply != string(value_of(k))]
            assert not wrong, wrong[:3]
            return None if all(r.status == "R" for r in results) else "frozen node's keys"
        wait_for("the thawed node's keys", all_right, seconds=30, interval=0.01)
        cluster.wait_ok()


class FakeNode:
    """A TCP server speaking just enough RESP to play a cluster's only node, answering
    what no real node would.  CLUSTER SLOTS gives it every slot, among ranges a client
    must skip (malformed, out of range, unknown endpoints); ASKING is +OK; any other
    command is answered by answer(args) (raw RESP; None closes the connection, HANG
    answers nothing more on it).  Every command received is in `received`."""
    HANG = object()

    def __init__(self, answer):
        self.answer = answer
        self.received = []
        self.closing = threading.Event()
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.settimeout(0.05)  # accept() sees `closing` soon
        self.port = self.server.getsockname()[1]
        self.threads = [threading.Thread(target=self.accept, daemon=True)]
        self.threads[0].start()

    def slots(self):
        def node(host, port):
            return b"*2\r\n" + host + b":%d\r\n" % port
        good = b"*3\r\n:0\r\n:16383\r\n" + node(b"$9\r\n127.0.0.1\r\n", self.port)
        bad = [b"*3\r\n$1\r\n0\r\n:5\r\n" + node(b"$9\r\n127.0.0.1\r\n", 1),
               b"*3\r\n:20000\r\n:20001\r\n" + node(b"$9\r\n127.0.0.1\r\n", 1),
               b"*3\r\n:-1\r\n:4\r\n" + node(b"$9\r\n127.0.0.1\r\n", 1),
               b"*3\r\n:9\r\n:4\r\n" + node(b"$9\r\n127.0.0.1\r\n", 1),
               b"*3\r\n:0\r\n:10\r\n" + node(b"$1\r\n?\r\n", 1),
               b"*3\r\n:0\r\n:10\r\n" + node(b"$9\r\n127.0.0.1\r\n", 0),
               b"*3\r\n:0\r\n:10\r\n" + node(b"$9\r\n127.0.0.1\r\n", 70000),
               b"*3\r\n:0\r\n:10\r\n" + node(b":1\r\n", 1),
               b"*3\r\n:0\r\n:10\r\n*0\r\n", b"*3\r\n:0\r\n:10\r\n$-1\r\n",
               b"*2\r\n:0\r\n:10\r\n", b":7\r\n", b"$-1\r\n", b"*-1\r\n"]
        # A nil or empty host is the replying node's.
        same = [b"*3\r\n:100\r\n:200\r\n" + node(b"$-1\r\n", self.port),
                b"*3\r\n:300\r\n:400\r\n" + node(b"$0\r\n\r\n", self.port)]
        entries = [good] + bad + same
        return b"*%d\r\n" % len(entries) + b"".join(entries)

    def accept(self):
        while not self.closing.is_set():
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.settimeout(None)
            thread = threading.Thread(target=self.serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def serve(self, conn):
        with conn, conn.makefile("rb") as f:
            while True:
                line = f.readline()
                if not line.startswith(b"*"):
                    return
                args = []
                for _ in range(int(line[1:])):
                    size = int(f.readline()[1:])
                    args.append(f.read(size + 2)[:-2])
                self.received.append(args)
                name = args[0].upper()
                if name == b"CLUSTER" and args[1].upper() == b"SLOTS":
                    reply = self.slots()
                elif name == b"ASKING":
                    reply = b"+OK\r\n"
                else:
                    reply = self.answer(args)
                if reply is None:
                    return
                if reply is FakeNode.HANG:
                    self.closing.wait()
                    return
                conn.sendall(reply)

    def close(self):
        self.closing.set()
        self.server.close()
        for thread in self.threads:
            thread.join(timeout=10)


def test_odd_replies_never_crash():
    """Replies no real node sends, and redirections without end: the client skips what
    it cannot read, bounds every loop, and gives every command back."""
    counts = {}

    def answer(args):
        key = args[1].decode() if len(args) > 1 else ""
        counts[key] = counts.get(key, 0) + 1
        port = fake.port
        replies = {
            "moved-loop": b"-MOVED 7 127.0.0.1:%d\r\n" % port,
            "ask-loop": b"-ASK 7 127.0.0.1:%d\r\n" % port,
            "tryagain": b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
            "clusterdown": b"-CLUSTERDOWN The cluster is down\r\n",
            "bad-moved-1": b"-MOVED abc\r\n",
            "bad-moved-2": b"-MOVED 99999 127.0.0.1:1\r\n",
            "bad-moved-3": b"-MOVED 5 127.0.0.1:notaport\r\n",
            "bad-moved-4": b"-MOVED 5\r\n",
            "moved-word": b"-MOVEDX 5 127.0.0.1:1\r\n",
            "nested": b"*4\r\n:1\r\n$-1\r\n*1\r\n$1\r\nx\r\n*0\r\n",
            "garbage": b"!!!garbage\r\n",
            "eof": None,
            "hang": FakeNode.HANG,
        }
        if key == "moved-once":
            return b"-MOVED 5 :%d\r\n" % port if counts[key] == 1 else b"$4\r\ndone\r\n"
        return replies.get(key, b"+OK\r\n")

    fake = FakeNode(answer)
    timeout_ms, redirects, retry_ms = 300, 3, 100
    driver = None
    try:
        driver = Driver(["127.0.0.1:%d" % fake.port], timeout_ms=timeout_ms,
                        redirects=redirects, retry_ms=retry_ms, manual_clock=True)
        # Every malformed range was skipped: the one node serves every slot.
        nodes = driver.nodes()
        assert nodes == [("127.0.0.1:%d" % fake.port, True, 1, 16384)], nodes

        def one(key, status, reply=None, command="GET"):
            before = driver.stats()
            results, took = driver.run([[command, key]])
            assert results == [Result(status, 0, reply)], (key, results)
            after = driver.stats()
            return {name: after[name] - before[name] for name in after}, took

        # Redirections without end: max_redirects hops, then UNREACHABLE.
        delta, _ = one("moved-loop", "U")
        assert delta["moved"] == redirects + 1 and delta["unreachable"] == 1, delta
        fake.received.clear()
        delta, _ = one("ask-loop", "U")
        assert delta["ask"] == redirects + 1, delta
        # (The MOVED before asked for the map to be read before this run.)
        assert ([a[0] for a in fake.received]
                == [b"CLUSTER", b"GET"] + [b"ASKING", b"GET"] * redirects), fake.received
        # TRYAGAIN and CLUSTERDOWN: retried for about timeout_ms, then UNREACHABLE.
        for key, stat in (("tryagain", "tryagain"), ("clusterdown", "clusterdown")):
            delta, took = one(key, "U")
            assert delta[stat] >= 2 and delta["unreachable"] == 1, delta
            assert timeout_ms / 2000 <= took < timeout_ms / 1000 + 1, took
        # Redirections that cannot be read are the command's reply.
        for key, text in (("bad-moved-1", "MOVED abc"), ("bad-moved-2", "MOVED 99999 127.0.0.1:1"),
                          ("bad-moved-3", "MOVED 5 127.0.0.1:notaport"), ("bad-moved-4", "MOVED 5"),
                          ("moved-word", "MOVEDX 5 127.0.0.1:1")):
            one(key, "R", "-" + esc(text))
        # An empty host is the replying node's.
        delta, _ = one("moved-once", "R", "$done")
        assert delta["moved"] == 1, delta
        one("nested", "R", "*4[:1,_,*1[$x],*0[]]")
        assert driver.nodes()[0][1:] == (True, driver.nodes()[0][2], 16384)

        # A protocol error, an end of connection, a reply timeout: the node fails, its
        # command is UNREACHABLE, and so is the next one while the backoff lasts; past
        # it the client connects again and the replies are right.
        backoff = retry_ms
        for key in ("garbage", "eof", "hang"):
            delta, took = one(key, "U")
            assert delta["unreachable"] == 1, (key, delta)
            if key == "hang":
                assert took >= timeout_ms / 1000, took
            assert not driver.nodes()[0][1]
            delta, _ = one("after-" + key, "U", command="SET")
            assert delta["reconnects"] == 0, delta
            driver.advance(backoff)
            delta, _ = one("after-" + key, "R", "+OK", command="SET")
            assert delta["reconnects"] == 1, delta
            assert driver.nodes()[0][1]
        # Everything in one batch: every command comes back, in its place.
        keys = ["moved-loop", "nested", "bad-moved-1", "moved-once", "plain"]
        results, _ = driver.run(gets(keys))
        assert [r.status for r in results] == ["U", "R", "R", "R", "R"], results
    finally:
        if driver:
            driver.close()
        fake.close()
