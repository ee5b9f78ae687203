"""What the module's tests check with, in one place: errors, dumps, bounds, replicas."""
import math
import time

import redis


def err(r, *args):
    """The error text a command replies (the test fails if it replies a value)."""
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("%r answered without an error" % (args,))


def scandump(r, key, command="BF.SCANDUMP"):
    """A filter's whole dump: the [iterator, chunk] pairs, RedisBloom's loop."""
    chunks, it = [], 0
    while True:
        it, data = r.execute_command(command, key, it)
        if it == 0:
            assert data == b""
            return chunks
        chunks.append((it, data))


def fill_to_the_limit(r, key, many, one, step, dump):
    """Add new items to `key` until its memory limit: `many` (a multi-item add) of `step`
    items at a time until one is refused whole (the memory limit its error, the `dump`
    command's dump unchanged), then `one` item at a time until one is refused.  Returns
    how many items went in."""
    i = 0
    while True:
        before = scandump(r, key, dump)
        try:
            r.execute_command(many, key, *["k%d" % j for j in range(i, i + step)])
        except redis.ResponseError as e:
            assert "memory limit" in str(e), e
            break
        i += step
        assert i < 10 ** 7, "no limit reached"
    assert scandump(r, key, dump) == before, "a refused %s changed the filter" % many
    while True:
        try:
            r.execute_command(one, key, "k%d" % i)
        except redis.ResponseError as e:
            assert "memory limit" in str(e), e
            return i
        i += 1


def binomial_bound(n, p, sigmas=5.0):
    """An upper bound on a binomial(n, p) count, `sigmas` standard deviations out."""
    return n * p + sigmas * math.sqrt(n * p * (1 - p)) + 1


def wait_synced(master, replica):
    """Until the replica has applied everything the master has written."""
    assert master.execute_command("WAIT", 1, 10000) == 1
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = master.info("replication")["master_repl_offset"]
        rep = replica.info("replication")
        if rep.get("master_link_status") == "up" and rep.get("slave_repl_offset") == m:
            return
        time.sleep(0.02)
    raise AssertionError("the replica did not catch up")


def wait_for_rewrite(r):
    """Until the server has no AOF rewrite running or scheduled."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        info = r.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return
        time.sleep(0.05)
    raise AssertionError("the AOF rewrite did not end")
