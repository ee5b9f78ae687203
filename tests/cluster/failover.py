"""A master killed under a producer streaming at a bounded rate, for test_failover.py,
test_cluster.py and bench/cluster_failover.py.

stream_through_kill() runs `once --cluster` on a pipe that a thread here writes at a
fixed rate (lines due by the clock, so a producer blocked in a failover hold finds
them waiting, as a live source's would be), kills one master by its PID when a given
share of the stream is written, and counts what came out: repeats (a key printed more
than once) and keys lost (sent and never printed).  The producer's stdout and stderr
go to files, so that nothing here can block it.
"""
import json
import os
import random
import subprocess
import tempfile
import threading
import time

ONCE = os.environ.get("ONCE_CLI")
# Lines written at a time: a tick of the writer's clock.
TICK_SECONDS = 0.01


def make_stream(events, new_share, seed):
    """`events` keys, each new with probability new_share and else a repeat of one sent
    before (uniformly): repeats all along the stream, so a failover at any point meets
    them.  Returns (lines as bytes, distinct keys)."""
    rng = random.Random(seed)
    sent, out = [], []
    for _ in range(events):
        if not sent or rng.random() < new_share:
            key = b"k%d" % len(sent)
            sent.append(key)
        else:
            key = sent[rng.randrange(len(sent))]
        out.append(key + b"\n")
    return out, sent


def slice_keys(cluster, name):
    """The slices' keys of filter `name`, from its layout."""
    for node in cluster.running():
        try:
            layout = node.client(decode=False).get(("%s:layout" % name).encode())
        except Exception:
            continue
        if layout:
            tags = [l for l in layout.decode().splitlines() if l.startswith("tags ")]
            return ["%s:slice:%d:{%s}" % (name, i, t) for i, t in enumerate(tags[0].split()[1:])]
    raise AssertionError("no layout for %s" % name)


def victim_of(cluster, name):
    """A master holding a slice of filter `name` but not its layout (which every
    producer reads when it starts)."""
    layout_owner = cluster.owner(cluster.keyslot("%s:layout" % name))
    for key in slice_keys(cluster, name):
        owner = cluster.owner(cluster.keyslot(key))
        if owner != layout_owner:
            return owner
    raise AssertionError("every slice is on the layout's master")


def stream_through_kill(cluster, name, opts, events=300000, rate=40000, new_share=1 / 3,
                        kill_at=0.4, seed=1, once=None):
    """Stream `events` lines at `rate` a second through `once --cluster ... --key name
    opts`, killing a master of a slice when kill_at of them are written.  Returns a
    dict: lines, distinct, delivered, repeats, lost, seconds, killed (its index),
    kill_seconds (into the stream), stats (--stats=json's last line, if asked), stderr."""
    once = once or ONCE
    lines, keys = make_stream(events, new_share, seed)
    # The filter made first, so that its slices exist and the victim is known.
    subprocess.run([once, "--cluster", ",".join(cluster.seeds()), "--key", name, *opts],
                   input=b"", capture_output=True, timeout=120, check=True)
    victim = victim_of(cluster, name)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        command = [once, "--cluster", ",".join(cluster.seeds()), "--key", name, *opts]
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=err)
        killed = {}

        def write():
            start = time.monotonic()
            written = 0
            try:
                while written < len(lines):
                    due = min(len(lines), int((time.monotonic() - start) * rate) + 1)
                    if due > written:
                        proc.stdin.write(b"".join(lines[written:due]))
                        proc.stdin.flush()
                        written = due
                    if "at" not in killed and written >= kill_at * len(lines):
                        killed["at"] = time.monotonic() - start
                        cluster.kill(victim)
                    time.sleep(TICK_SECONDS)
                proc.stdin.close()
            except BrokenPipeError:
                pass

        started = time.monotonic()
        writer = threading.Thread(target=write)
        writer.start()
        writer.join()
        code = proc.wait(timeout=600)
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        printed = out.read().splitlines()
        stderr = err.read().decode(errors="replace")
    assert code == 0, (command, code, stderr[-4000:])
    stats = None
    if any(o.startswith("--stats=json") for o in opts):
        stats = json.loads(stderr.strip().splitlines()[-1])
    delivered = set(printed)
    return {"lines": len(lines), "distinct": len(keys), "delivered": len(printed),
            "repeats": len(printed) - len(delivered), "lost": len(set(keys) - delivered),
            "seconds": seconds, "killed": victim, "kill_seconds": killed.get("at"),
            "stats": stats, "stderr": stderr}
