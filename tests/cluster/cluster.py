"""Real Redis Clusters for the cluster/ component's tests.

A Cluster is Debian's redis-server nodes, each on free loopback ports (its client port
and its cluster bus port) with its own temporary directory, daemonized with a pidfile
and stopped by that PID, never by name (tests run beside other jobs), as
tests/module/server.py runs single servers.  Slots are spread evenly over the masters
(CLUSTER ADDSLOTSRANGE), the nodes join by CLUSTER MEET, replicas by CLUSTER REPLICATE,
and the cluster is ready when every node running says cluster_state:ok, knows every
node, agrees with the others on which master serves each slot, and every replica's
link to its master is up.  Every wait polls with a deadline and fails naming what it
waited for; nothing sleeps a fixed time for a state.

When ONCE_MODULE names the module (once.so), every node loads it; ONCE_MODULE_PRELOAD
(the sanitizer build) is preloaded into every node, whose sanitizer reports stop()
turns into a failure.

Node indices: masters are 0 .. masters-1, then the replicas of master m are
masters + m * replicas + j.  After a failover a replica may serve slots and a master
none: owner(slot) says who serves a slot now.
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                "module"))
from server import (REDIS_SERVER, Stopped, end_process, exited, fail_on_reports,  # noqa: E402
                    free_port, sanitizer_reports, server_environment)

SLOTS = 16384
HOST = "127.0.0.1"
# How long a cluster may take to form or settle, and a node to start, before a wait
# fails: generous, for a busy machine and the sanitizer build.
READY_SECONDS = 90
START_SECONDS = 30
# Keys moved by one MIGRATE.
MIGRATE_BATCH = 100


class ClusterError(RuntimeError):
    pass


def wait_for(what, check, seconds=READY_SECONDS, interval=0.02):
    """Poll check() until it returns None (ready); otherwise it returns what is still
    missing, which the failure names after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            missing = check()
        except (redis.exceptions.RedisError, OSError) as e:
            missing = "%s: %s" % (type(e).__name__, e)
        if missing is None:
            return
        if time.monotonic() > deadline:
            raise ClusterError("%s: not within %d s: %s" % (what, seconds, missing))
        time.sleep(interval)


def info_fields(text):
    """CLUSTER INFO's or INFO's "name:value" lines as a dict."""
    fields = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip()] = value.strip()
    return fields


class Node:
    """One cluster node: its ports and directory (nodes.conf, data files) are kept
    across restarts."""

    def __init__(self, index, extra, full_coverage):
        self.index = index
        self.extra = list(extra)
        self.full_coverage = full_coverage
        self.dir = tempfile.mkdtemp(prefix="once-cluster-%d-" % index)
        self.port = None
        self.bus_port = None
        self.pid = None
        self._clients = {}

    def __repr__(self):
        return "node %d (port %s)" % (self.index, self.port)

    def command_line(self):
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", HOST,
                "--save", "", "--daemonize", "yes",
                "--pidfile", os.path.join(self.dir, "redis.pid"),
                "--logfile", os.path.join(self.dir, "redis.log"),
                "--dir", self.dir,
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-port", str(self.bus_port),
                "--cluster-node-timeout", "1000",
                "--cluster-require-full-coverage", "yes" if self.full_coverage else "no"]
        module = os.environ.get("ONCE_MODULE")
        if module:
            if not os.path.exists(module):
                raise ClusterError("ONCE_MODULE names no file: %s" % module)
            args += ["--loadmodule", module]
        return args + self.extra

    def environment(self):
        """As server.py's: the sanitizer runtime preloaded, its reports to files here."""
        return server_environment(self.dir)

    def log(self):
        try:
            with open(os.path.join(self.dir, "redis.log"), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def start(self, new_ports):
        """Start the server (on new free ports the first time) and wait for its PING."""
        pidfile = os.path.join(self.dir, "redis.pid")
        for _ in range(20 if new_ports else 1):
            if new_ports:
                self.port, self.bus_port = free_port(), free_port()
                if self.port == self.bus_port:
                    continue
            if os.path.exists(pidfile):
                os.unlink(pidfile)
            self._clients = {}
            subprocess.run(self.command_line(), check=True, env=self.environment())
            deadline = time.monotonic() + START_SECONDS
            last = None
            while time.monotonic() < deadline:
                try:
                    self.client().ping()
                    with open(pidfile) as f:
                        self.pid = int(f.read().strip())
                    return
                except (redis.exceptions.RedisError, OSError, ValueError) as e:
                    last = e
                    if "Address already in use" in self.log() or "Can't load" in self.log():
                        break
                    time.sleep(0.02)
            if "Address already in use" not in self.log():
                break
        raise ClusterError("%r did not start: %s\n%s" % (self, last, self.log()[-4000:]))

    def running(self):
        return self.pid is not None and not exited(self.pid)

    def client(self, decode=True):
        """A redis-py client of this node alone (no cluster routing)."""
        if decode not in self._clients:
            self._clients[decode] = redis.Redis(host=HOST, port=self.port, socket_timeout=30,
                                                decode_responses=decode)
        return self._clients[decode]

    def call(self, *args):
        return self.client().execute_command(*args)

    def signal(self, sig):
        if self.pid is None:
            raise ClusterError("%r is not running" % self)
        os.kill(self.pid, sig)

    def kill(self):
        """SIGKILL by PID, and wait for the process to end."""
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        wait_for("%r to end" % self, lambda: None if exited(pid) else "running")

    def stop(self):
        """SIGTERM by PID (SIGKILL if it lingers), and wait for the process to end."""
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        if not end_process(pid):  # a frozen node is woken first; one killed is waited for
            wait_for("%r to end" % self, lambda: None if exited(pid) else "running")

    def sanitizer_reports(self):
        return sanitizer_reports(self.dir)

    def drop_data(self):
        """Delete the data files (RDB, AOF), keeping nodes.conf."""
        for name in os.listdir(self.dir):
            path = os.path.join(self.dir, name)
            if name == "dump.rdb" or name.startswith("appendonly"):
                if os.path.isdir(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)


class Cluster(Stopped):
    """A Redis Cluster of `masters` masters, each with `replicas` replicas, every node
    with the server options `extra` too.  cluster-require-full-coverage is no unless
    full_coverage=True.  Stopped by stop(), which also runs at exit."""

    def __init__(self, masters=3, replicas=0, extra=(), full_coverage=False):
        if masters < 1 or replicas < 0:
            raise ValueError("a cluster needs a master")
        self.masters = masters
        self.replicas = replicas
        self.nodes = []
        self.ids = []
        self._moving = {}
        self._stopped = False
        atexit.register(self.stop)
        try:
            for i in range(masters * (1 + replicas)):
                node = Node(i, extra, full_coverage)
                self.nodes.append(node)
                node.start(new_ports=True)
            self.ids = [node.call("CLUSTER", "MYID") for node in self.nodes]
            for m in range(masters):
                first, last = m * SLOTS // masters, (m + 1) * SLOTS // masters - 1
                self.nodes[m].call("CLUSTER", "ADDSLOTSRANGE", first, last)
            for node in self.nodes[1:]:
                self.nodes[0].call("CLUSTER", "MEET", HOST, node.port, node.bus_port)
            wait_for("every node to know every other", self._missing_nodes)
            for m in range(masters):
                for r in self.replicas_of(m):
                    self.nodes[r].call("CLUSTER", "REPLICATE", self.ids[m])
            self.wait_ok()
        except BaseException:
            self.stop()
            raise

    # ------------------------------------------------------------ what is where

    def replicas_of(self, master):
        """The indices of the replicas a master was made with."""
        first = self.masters + master * self.replicas
        return list(range(first, first + self.replicas))

    def running(self):
        return [node for node in self.nodes if node.running()]

    def seeds(self):
        """"host:port" of every node running."""
        return ["%s:%d" % (HOST, node.port) for node in self.running()]

    def node_of_port(self, port):
        for node in self.nodes:
            if node.port == port:
                return node.index
        raise ClusterError("no node on port %s" % port)

    def slot_map(self, via=None):
        """[(first, last, master index)] as a node sees it (CLUSTER SLOTS)."""
        node = self.nodes[via] if via is not None else self.running()[0]
        ranges = []
        for entry in node.call("CLUSTER", "SLOTS"):
            ranges.append((int(entry[0]), int(entry[1]), self.node_of_port(int(entry[2][1]))))
        return sorted(ranges)

    def owner(self, slot):
        """The node serving a slot now."""
        for first, last, index in self.slot_map():
            if first <= slot <= last:
                return index
        raise ClusterError("no node serves slot %d" % slot)

    def is_master(self, index):
        return self.nodes[index].client().info("replication").get("role") == "master"

    def keyslot(self, key):
        return int(self.running()[0].call("CLUSTER", "KEYSLOT", key))

    # ------------------------------------------------------------ readiness

    def _missing_nodes(self):
        for node in self.running():
            lines = node.call("CLUSTER", "NODES").splitlines()
            pending = [line for line in lines
                       if "handshake" in line.split()[2] or "noaddr" in line.split()[2]]
            if len(lines) != len(self.nodes) or pending:
                return "%r knows %d of %d nodes (%d in handshake)" % (
                    node, len(lines), len(self.nodes), len(pending))
        return None

    def not_ok(self):
        """None when the cluster is ok (wait_ok()), else what is not."""
        try:
            return self._not_ok()
        except (redis.exceptions.RedisError, OSError) as e:
            return "%s: %s" % (type(e).__name__, e)

    def _not_ok(self):
        views = {}
        for node in self.running():
            info = info_fields(node.call("CLUSTER", "INFO"))
            if info.get("cluster_state") != "ok":
                return "%r: cluster_state:%s" % (node, info.get("cluster_state"))
            if info.get("cluster_known_nodes") != str(len(self.nodes)):
                return "%r knows %s nodes" % (node, info.get("cluster_known_nodes"))
            if info.get("cluster_slots_assigned") != str(SLOTS):
                return "%r: %s slots assigned" % (node, info.get("cluster_slots_assigned"))
            replication = node.client().info("replication")
            if (replication.get("role") == "slave"
                    and replication.get("master_link_status") != "up"):
                return "%r: master_link_status:%s" % (node, replication.get("master_link_status"))
            views[node.index] = self.slot_map(node.index)
        distinct = {tuple(view) for view in views.values()}
        if len(distinct) > 1:
            return "the nodes disagree on the slots: %s" % views
        # A master just killed still serves its slots in every view until its failure is
        # detected (and, with full coverage off, cluster_state stays ok meanwhile).
        running = {node.index for node in self.running()}
        for first, last, index in next(iter(distinct), ()):
            if index not in running:
                return "slots %d-%d are served by node %d, which is down" % (first, last, index)
        return None

    def wait_ok(self, seconds=READY_SECONDS):
        """Wait until every node running says cluster_state:ok, knows every node and
        every slot assigned, agrees with the others on the slot map, which names only
        nodes running, and each replica's link to its master is up."""
        wait_for("the cluster to be ok", self._not_ok, seconds)

    def wait_owner(self, slot, index, seconds=READY_SECONDS, nudge=None):
        """Wait until every node running says node `index` serves `slot`; while one
        does not, call nudge() if given."""
        def missing():
            for node in self.running():
                owner = [i for first, last, i in self.slot_map(node.index) if first <= slot <= last]
                if owner != [index]:
                    if nudge is not None:
                        nudge()
                    return "%r says slot %d is served by %s" % (node, slot, owner)
            return None
        wait_for("node %d to serve slot %d" % (index, slot), missing, seconds)

    def wait_replicated(self, seconds=READY_SECONDS):
        """Wait until every running replica has all its master has written."""
        def missing():
            for node in self.running():
                replication = node.client().info("replication")
                if replication.get("role") != "slave":
                    continue
                master = self.nodes[self.node_of_port(int(replication["master_port"]))]
                offset = master.client().info("replication")["master_repl_offset"]
                if replication.get("slave_repl_offset", -1) < offset:
                    return "%r at offset %s of %s" % (node, replication.get("slave_repl_offset"),
                                                      offset)
            return None
        wait_for("the replicas to catch up", missing, seconds)

    # ------------------------------------------------------------ failures

    def kill(self, index):
        """SIGKILL the node, by its PID."""
        self.nodes[index].kill()

    def freeze(self, index):
        """SIGSTOP the node: its connections stay open and it answers nothing."""
        self.nodes[index].signal(signal.SIGSTOP)

    def thaw(self, index):
        self.nodes[index].signal(signal.SIGCONT)

    def restart(self, index, empty=False):
        """Start the node again (stopping it first if it runs) on the same ports and
        nodes.conf; empty=True deletes its data files first.  Returns once it answers
        PING; wait_ok() waits for the cluster."""
        node = self.nodes[index]
        node.stop()
        if empty:
            node.drop_data()
        node.start(new_ports=False)

    # ------------------------------------------------------------ moving slots

    def migrate(self, source, target, keys):
        """MIGRATE keys from node `source` to node `target`, MIGRATE_BATCH at a time."""
        client = self.nodes[source].client(decode=False)
        for i in range(0, len(keys), MIGRATE_BATCH):
            client.execute_command("MIGRATE", HOST, self.nodes[target].port, "", 0, 10000,
                                   "KEYS", *keys[i:i + MIGRATE_BATCH])

    def keys_in_slot(self, index, slot):
        """Every key node `index` holds in `slot` (bytes)."""
        client = self.nodes[index].client(decode=False)
        count = int(client.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot))
        if count == 0:
            return []
        return list(client.execute_command("CLUSTER", "GETKEYSINSLOT", slot, count))

    def begin_move_slot(self, slot, to_node, migrate=0):
        """Start moving a slot to node `to_node`: IMPORTING there, MIGRATING at its
        owner, and the first `migrate` of its keys moved.  Returns the keys moved."""
        source = self.owner(slot)
        if source == to_node:
            raise ClusterError("node %d already serves slot %d" % (to_node, slot))
        self.nodes[to_node].call("CLUSTER", "SETSLOT", slot, "IMPORTING", self.ids[source])
        self.nodes[source].call("CLUSTER", "SETSLOT", slot, "MIGRATING", self.ids[to_node])
        self._moving[slot] = (source, to_node)
        moved = self.keys_in_slot(source, slot)[:migrate]
        self.migrate(source, to_node, moved)
        return moved

    def finish_move_slot(self, slot):
        """Move the slot's remaining keys and give it to its new node everywhere
        (CLUSTER SETSLOT NODE on the target, the source, then every other master; the
        replicas learn it from theirs)."""
        source, target = self._moving.pop(slot)
        while True:
            keys = self.keys_in_slot(source, slot)
            if not keys:
                break
            self.migrate(source, target, keys)
        order = [target, source] + [n.index for n in self.nodes if n.index not in (source, target)]
        for index in order:
            if self.nodes[index].running() and self.is_master(index):
                self.nodes[index].call("CLUSTER", "SETSLOT", slot, "NODE", self.ids[target])
        # The target bumps its config epoch as it takes the slot only if it believes
        # another node's is higher; a belief out of date lets a node that still saw the
        # source's higher epoch send the target an UPDATE that hands the slot back, and
        # then nobody claims it again.  While any node disagrees, the target takes the
        # slot again and bumps its epoch, which it now knows must be higher.
        nudged = [time.monotonic()]

        def nudge():
            if time.monotonic() - nudged[0] < 2:
                return
            nudged[0] = time.monotonic()
            node = self.nodes[target]
            node.call("CLUSTER", "SETSLOT", slot, "NODE", self.ids[target])
            node.call("CLUSTER", "BUMPEPOCH")
        self.wait_owner(slot, target, nudge=nudge)

    def move_slot(self, slot, to_node):
        """Move a slot and all its keys to node `to_node`."""
        self.begin_move_slot(slot, to_node)
        self.finish_move_slot(slot)

    # ------------------------------------------------------------ the end

    def stop(self):
        """Stop every node by its PID and delete the directories; a sanitizer report
        from any node is a failure."""
        if self._stopped:
            return
        self._stopped = True
        reports = []
        for node in self.nodes:
            node.stop()
            reports += node.sanitizer_reports()
            shutil.rmtree(node.dir, ignore_errors=True)
        fail_on_reports(reports)
