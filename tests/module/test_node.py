"""node-redis, the current major of the `redis` npm package with @redis/bloom, runs its
own BF.* calls against the module under RESP2 and RESP3 (node/bloom.mjs checks what
the client returns)."""
import os
import subprocess

from server import Server

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")


def run_client(protocol):
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "redis")):
        raise RuntimeError("node-redis is not installed: run make deps")
    with Server() as s:
        out = subprocess.run(["node", os.path.join(NODE_DIR, "bloom.mjs"), str(s.port),
                              str(protocol)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        assert s.alive()


def test_node_redis_bloom_resp2():
    run_client(2)


def test_node_redis_bloom_resp3():
    run_client(3)
