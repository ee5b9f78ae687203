"""docs/CLUSTER.md's shell blocks run as written.

The ```sh blocks are read from docs/CLUSTER.md when the test runs (the doc is their one
copy), each named by the nearest `## ` heading above it.  "Starting a cluster for it"
is run in a fresh temporary directory, the cluster it makes is waited for, then
"Running producers" is run there on an `events` file written to fit its options, and
what it prints is checked: every distinct key once, repeats dropped, false positives
within the block's --error.  Every other shell block is listed in NOT_RUN with why, and
a shell block that is neither run nor listed fails the test, so the doc cannot grow
commands nobody runs.

The blocks are changed only mechanically, each change asserted to have matched:

- the ports 7000-7005 become free loopback ports (free_port);
- the module's installed path becomes "$ONCE_MODULE", the built module;
- `once` and `redis-server` are found first on PATH in a directory of the test's own:
  `once` a link to $ONCE_CLI, `redis-server` a script that runs Debian's redis-server
  with the block's arguments and two more appended, `--cluster-port` (a free port:
  port + 10000, the default bus port, may not be) and `--pidfile` (each node is stopped
  by that PID, never by name);
- `redis-cli --cluster create` asks to type "yes": it is given "yes" on its stdin,
  the block's command line unchanged.
"""
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

import redis

from cluster import HOST, SLOTS, START_SECONDS, info_fields, wait_for
from server import (REDIS_SERVER, Stopped, end_process, exited, fail_on_reports,
                    free_port, module_path, sanitizer_reports, server_environment)
from test_cluster import SEED, binomial_bounds, keys_of, repeated_stream

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                   "docs", "CLUSTER.md")
# Fences whose text is commands for a shell.
SHELL_FENCES = {"sh", "bash", "shell", "console"}

START = "Starting a cluster for it"
PRODUCERS = "Running producers"
# The blocks this test runs, in this order.
RUN = [START, PRODUCERS]
# Shell blocks of the doc this test does not run, by name, each with why.
NOT_RUN = {}

DOC_PORTS = [7000, 7001, 7002, 7003, 7004, 7005]
INSTALLED_MODULE = "/usr/local/lib/redis/modules/once.so"
# The most keys a producers block may ask its filter for: the filter is made at its
# full size on the masters (and again on the replicas), about 4 bytes a key at 0.001.
MAX_TEST_CAPACITY = 10 ** 8
# How long a block may run, and the cluster take to be ok after the start block.
BLOCK_SECONDS = 180
READY_SECONDS = 120
# The events the test writes: distinct keys, and lines in all (the rest repeats).
DISTINCT = 20000
EVENTS = 60000


def shell_blocks(text):
    """[(name, text)] of every shell block, in order.  A block's name is the nearest
    `## ` heading above it; a second block under one heading is "NAME (2)", and so on."""
    blocks = []
    seen = {}
    heading = "(before any heading)"
    fence = None
    body = []
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None:
            if line.startswith("## "):
                heading = line[3:].strip()
            elif stripped.startswith("```"):
                fence = stripped[3:].strip().split(" ")[0].lower()
                body = []
        elif stripped.startswith("```"):
            if fence in SHELL_FENCES:
                seen[heading] = seen.get(heading, 0) + 1
                name = heading if seen[heading] == 1 else "%s (%d)" % (heading, seen[heading])
                blocks.append((name, "\n".join(body) + "\n"))
            fence = None
        else:
            body.append(line)
    assert fence is None, "docs/CLUSTER.md: a ``` fence is not closed"
    return blocks


def doc_blocks():
    with open(DOC) as f:
        return shell_blocks(f.read())


def substitute(block, name, pattern, replacement, what):
    """re.subn, asserted to have matched."""
    text, count = re.subn(pattern, replacement, block)
    assert count > 0, "docs/CLUSTER.md, %r: no %s to substitute (%s)" % (name, what, pattern)
    return text


def substitute_ports(block, name, ports, every):
    """The doc's ports to the test's: every one of them when `every`, else at least one."""
    found = 0
    for doc_port in DOC_PORTS:
        pattern = r"\b%d\b" % doc_port
        if every:
            block = substitute(block, name, pattern, str(ports[doc_port]), "port %d" % doc_port)
        else:
            block, count = re.subn(pattern, str(ports[doc_port]), block)
            found += count
    assert every or found, "docs/CLUSTER.md, %r names no node (%s)" % (name, DOC_PORTS)
    return block


def tokens(block):
    """The block's words, as the shell splits them (backslash-newlines joined)."""
    return shlex.split(block.replace("\\\n", " "), comments=True)


def option(words, *names):
    """The value after the first of `names` in words, or None."""
    for i, word in enumerate(words[:-1]):
        if word in names:
            return words[i + 1]
    return None


def count_of(text):
    """A --capacity N: an integer, suffixes k, M, G (10^3, 10^6, 10^9)."""
    scale = {"k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def all_ports():
    """Free loopback ports, two for each of the doc's nodes (client and bus), distinct."""
    chosen = []
    while len(chosen) < 2 * len(DOC_PORTS):
        port = free_port()
        if port not in chosen:
            chosen.append(port)
    ports = dict(zip(DOC_PORTS, chosen))
    bus = dict(zip(chosen, chosen[len(DOC_PORTS):]))
    return ports, bus


def is_redis_server(pid):
    """Is the PID a redis-server still?  (A pidfile a crashed node left names a PID that
    may be another process's by now: that one is not ours to stop.)"""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"redis-server" in f.read().split(b"\0")[0]
    except OSError:
        return False


class Nodes(Stopped):
    """The directory the blocks run in, and the nodes they start there: a node is
    recorded (NAME.started) by the redis-server wrapper before it runs, and its PID
    read from the --pidfile the wrapper adds.  stop() stops every one of them by that
    PID and deletes the directory, however the test ended."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="once-docs-")
        self.bin = os.path.join(self.dir, ".bin")
        os.mkdir(self.bin)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def install(self, ports, bus):
        """`once` and `redis-server` of the test's own, for PATH."""
        cli = os.environ.get("ONCE_CLI")
        assert cli and os.path.exists(cli), "ONCE_CLI must name the built once"
        os.symlink(os.path.abspath(cli), os.path.join(self.bin, "once"))
        cases = "".join("  %d) bus=%d ;;\n" % (port, bus[port]) for port in ports.values())
        # In the sanitizer build the servers preload its runtime (server_environment).
        env = server_environment(self.dir)
        exports = "".join("export %s=%s\n" % (k, shlex.quote(env[k]))
                          for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")
                          if k in env and env[k] != os.environ.get(k))
        script = """#!/bin/sh
# Debian's redis-server with the block's arguments, then a free cluster bus port and a
# pidfile (generated by tests/cluster/test_docs.py).
port=
prev=
for arg do
  if [ "$prev" = --port ]; then port=$arg; fi
  prev=$arg
done
case $port in
%s  *) echo "redis-server: the test gave no bus port for port '$port'" >&2; exit 1 ;;
esac
: > %s/node-$port.started
%sexec %s "$@" --cluster-port "$bus" --pidfile %s/node-$port.pid
""" % (cases, shlex.quote(self.dir), exports, shlex.quote(REDIS_SERVER), shlex.quote(self.dir))
        wrapper = os.path.join(self.bin, "redis-server")
        with open(wrapper, "w") as f:
            f.write(script)
        os.chmod(wrapper, 0o755)

    def run(self, name, block, stdin=b""):
        """Run a block with sh -e in the directory: (exit status, stdout, stderr).  Its
        output goes to files, so a command it leaves behind holds no pipe of ours; past
        BLOCK_SECONDS its process group (not the daemonized nodes, which leave it) is
        killed."""
        script = self.path(".block.sh")
        with open(script, "w") as f:
            f.write(block)
        out_path, err_path = self.path(".block.out"), self.path(".block.err")
        env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ.get("PATH", ""),
                   ONCE_MODULE=module_path())
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            p = subprocess.Popen(["/bin/sh", "-e", script], cwd=self.dir, env=env,
                                 stdin=subprocess.PIPE, stdout=out, stderr=err,
                                 start_new_session=True)
            try:
                p.communicate(stdin, timeout=BLOCK_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                raise AssertionError("docs/CLUSTER.md, %r: not done within %d s:\n%s"
                                     % (name, BLOCK_SECONDS, block))
        with open(out_path, "rb") as out, open(err_path, "rb") as err:
            return p.returncode, out.read(), err.read()

    def started(self):
        """The ports of the nodes the blocks started."""
        return sorted(int(name[len("node-"):-len(".started")]) for name in os.listdir(self.dir)
                      if name.startswith("node-") and name.endswith(".started"))

    def pid(self, port):
        with open(self.path("node-%d.pid" % port)) as f:
            return int(f.read().strip())

    def stop(self):
        problems = []
        for port in self.started():
            pidfile = self.path("node-%d.pid" % port)
            try:
                # A daemonized node writes its pidfile a moment after it was started.
                wait_for("the pidfile of the node on port %d" % port,
                         lambda: None if os.path.exists(pidfile) else "missing",
                         seconds=START_SECONDS)
                pid = self.pid(port)
            except Exception as e:  # noqa: BLE001 - every other node is still stopped
                problems.append("the node on port %d: %s" % (port, e))
                continue
            if is_redis_server(pid) and not end_process(pid):
                # Killed after lingering: waited for, as cluster.py's Node.stop.
                wait_for("the node on port %d to end" % port,
                         lambda: None if exited(pid) else "running")
        reports = sanitizer_reports(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)
        fail_on_reports(reports)
        if problems:
            raise AssertionError("nodes not stopped: %s" % "; ".join(problems))


def cluster_not_ready(ports, masters, replicas):
    """None when every node says cluster_state:ok, knows every node and every slot
    assigned, the nodes agree on the slot map, there are `masters` masters and
    `replicas` replicas, and every replica's link to its master is up; else what is
    not."""
    roles = {"master": 0, "slave": 0}
    views = {}
    for port in ports:
        client = redis.Redis(host=HOST, port=port, socket_timeout=10, decode_responses=True)
        try:
            info = info_fields(client.execute_command("CLUSTER", "INFO"))
            if info.get("cluster_state") != "ok":
                return "port %d: cluster_state:%s" % (port, info.get("cluster_state"))
            if info.get("cluster_known_nodes") != str(len(ports)):
                return "port %d knows %s nodes" % (port, info.get("cluster_known_nodes"))
            if info.get("cluster_slots_assigned") != str(SLOTS):
                return "port %d: %s slots assigned" % (port, info.get("cluster_slots_assigned"))
            replication = client.info("replication")
            role = replication.get("role")
            roles[role] = roles.get(role, 0) + 1
            if role == "slave" and replication.get("master_link_status") != "up":
                return "port %d: master_link_status:%s" % (
                    port, replication.get("master_link_status"))
            views[port] = sorted((int(e[0]), int(e[1]), int(e[2][1]))
                                 for e in client.execute_command("CLUSTER", "SLOTS"))
        finally:
            client.close()
    if roles != {"master": masters, "slave": replicas}:
        return "roles %s, not %d masters and %d replicas" % (roles, masters, replicas)
    if len({tuple(view) for view in views.values()}) > 1:
        return "the nodes disagree on the slots: %s" % views
    return None


def used_memory(ports):
    """{port: (role, used_memory)}."""
    memory = {}
    for port in ports:
        client = redis.Redis(host=HOST, port=port, socket_timeout=10, decode_responses=True)
        try:
            memory[port] = (client.info("replication")["role"],
                            int(client.info("memory")["used_memory"]))
        finally:
            client.close()
    return memory


def write_events(path, words, rng):
    """The events a producers block reads, to fit its options: the time in its
    --time-field (as --time-format says), the key in its -f field, tab-separated; every
    key once, then repeats.  Returns the first line of each key, by key."""
    time_field = int(option(words, "--time-field"))
    key_field = int(option(words, "-f", "--field"))
    time_format = option(words, "--time-format") or "epoch"
    assert time_format in ("epoch", "epoch_ms"), "the test writes epoch times, not %s" % time_format
    assert not ({"-t", "--delimiter", "--ws"} & set(words)), "the test writes tab-separated fields"
    assert time_field != key_field
    keys = keys_of("click", DISTINCT)
    stream = repeated_stream(keys, EVENTS, rng)
    # Ten minutes of events ending a minute ago: in the past (a time past the wall clock
    # is a bad time) and inside any window of an hour.
    start_ms = int(time.time() * 1000) - 11 * 60 * 1000
    step_ms = 10 * 60 * 1000 // EVENTS
    first = {}
    with open(path, "wb") as f:
        for i, key in enumerate(stream):
            t = start_ms + i * step_ms
            fields = [b"-"] * max(time_field, key_field)
            fields[time_field - 1] = b"%d" % (t if time_format == "epoch_ms" else t // 1000)
            fields[key_field - 1] = key
            line = b"\t".join(fields)
            first.setdefault(key, line)
            f.write(line + b"\n")
    return first, key_field


def test_every_shell_block_is_run_or_listed():
    names = [name for name, _ in doc_blocks()]
    assert not set(RUN) & set(NOT_RUN), "a block both run and listed as not run"
    unknown = [name for name in names if name not in RUN and name not in NOT_RUN]
    assert not unknown, ("docs/CLUSTER.md has shell blocks this test neither runs nor lists "
                         "in NOT_RUN with why: %s" % unknown)
    stale = [name for name in list(RUN) + list(NOT_RUN) if name not in names]
    assert not stale, "docs/CLUSTER.md has no shell block under %s" % stale


def test_cluster_blocks_run_as_written():
    blocks = dict(doc_blocks())
    for name in RUN:
        assert name in blocks, "docs/CLUSTER.md has no shell block under %r" % name
    module_path()
    ports, bus = all_ports()
    rng = random.Random(SEED)
    began = time.monotonic()
    with Nodes() as nodes:
        nodes.install(ports, bus)

        # Starting a cluster for it.
        block = blocks[START]
        words = tokens(block)
        assert "redis-server" in words and "redis-cli" in words, block
        replicas = int(option(words, "--cluster-replicas") or 0)
        block = substitute_ports(block, START, ports, every=True)
        block = substitute(block, START, re.escape(INSTALLED_MODULE), '"$ONCE_MODULE"',
                           "installed module path")
        # redis-cli --cluster create asks before it assigns the slots: "yes" is typed on
        # its stdin (the block is not given --cluster-yes).
        status, out, err = nodes.run(START, block, stdin=b"yes\n")
        started = time.monotonic()
        assert status == 0, "%r exited %d:\n%s\n%s\n%s" % (
            START, status, block, out.decode(errors="replace"), err.decode(errors="replace"))
        node_ports = list(ports.values())
        assert nodes.started() == sorted(node_ports), nodes.started()
        wait_for("the cluster of %r to be ok" % START,
                 lambda: cluster_not_ready(node_ports, len(node_ports) // (1 + replicas),
                                           len(node_ports) - len(node_ports) // (1 + replicas)),
                 seconds=READY_SECONDS)
        ready = time.monotonic()
        memory_before = used_memory(node_ports)

        # Running producers.
        block = blocks[PRODUCERS]
        words = tokens(block)
        assert words[0] == "once", "%r does not run once: %s" % (PRODUCERS, block)
        capacity = option(words, "--capacity")
        assert capacity is None or count_of(capacity) <= MAX_TEST_CAPACITY, (
            "%r asks a filter of %s keys: more than a test can make" % (PRODUCERS, capacity))
        error = float(option(words, "--error") or "0.001")
        events = option(words, "<")
        assert events is not None, "%r reads no file: %s" % (PRODUCERS, block)
        first, key_field = write_events(nodes.path(events), words, rng)
        block = substitute_ports(block, PRODUCERS, ports, every=False)
        status, out, err = nodes.run(PRODUCERS, block)
        assert status == 0, "%r exited %d:\n%s\n%s" % (PRODUCERS, status, block,
                                                      err.decode(errors="replace"))
        produced = time.monotonic()

        printed = out.splitlines()
        keys = [line.split(b"\t")[key_field - 1] for line in printed]
        # Repeats dropped: no key twice, and each line printed the key's first.
        assert len(keys) == len(set(keys)), "a key printed twice"
        assert all(first.get(key) == line for key, line in zip(keys, printed)), (
            "a line printed that is no key's first")
        # Every distinct key delivered, but for false positives at the block's --error.
        _, high = binomial_bounds(len(first), error)
        missing = len(first) - len(keys)
        assert missing <= high, "%d of %d keys not printed (at most %d at %g)" % (
            missing, len(first), high, error)
        memory = used_memory(node_ports)
        growth = {}
        for port, (role, used) in memory.items():
            growth[role] = growth.get(role, 0) + used - memory_before[port][1]
        print("%d lines, %d keys, %d printed; start block %.1f s, ok %.1f s later, "
              "producers block %.1f s" % (EVENTS, len(first), len(keys), started - began,
                                          ready - started, produced - ready))
        print("used_memory growth: masters %.1f MB, replicas %.1f MB"
              % (growth.get("master", 0) / 1e6, growth.get("slave", 0) / 1e6))
