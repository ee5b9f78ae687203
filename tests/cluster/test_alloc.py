"""The cluster client allocates through the library's allocator: an allocator a host
installs with once_set_allocator sees the client's blocks, opening a filter over a real
cluster and running a batch, and gets every one of them back when the client closes
(alloc_driver.c)."""
import os
import subprocess

from cluster import Cluster

DRIVER = os.environ.get("ONCE_ALLOC_DRIVER")


def test_an_installed_allocator_sees_the_cluster_client():
    with Cluster(masters=3) as cluster:
        p = subprocess.run([DRIVER, cluster.seeds()[0], "counted"], capture_output=True,
                           timeout=120)
    out = p.stdout.decode().strip()
    assert p.returncode == 0, (out, p.stderr.decode())
    got = dict(field.split("=") for field in out.split())
    # The routing layer alone (its client, a node each master) makes no filter: what
    # the allocator sees of it is the client's own.
    assert int(got["routing"]) >= 4, got
    # Then the layout's tags, the remote sites and the sliced filter too.
    assert int(got["opened"]) > int(got["routing"]), got
    # A batch's command lists and slice requests, the two-level step's scratch.
    assert int(got["batch"]) > 0, got
    # Alive while open, so the allocator may not change under the client; all given
    # back by once_cluster_close (and once_free of the local filter).
    assert int(got["alive_open"]) > 0 and got["refused"] == "1", got
    assert got["alive_closed"] == "0", got
