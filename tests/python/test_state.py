"""Saved state: files, bytes and pickle; shared with the CLI both ways; damage refused."""
import errno
import os
import pickle
import subprocess
import time

import pytest

import once
from conftest import ONCE_CLI, cli_environment, run_cli


def lines(keys):
    return b"".join(k.encode() + b"\n" for k in keys)


def test_save_and_load_answer_as_the_original(tmp_path):
    for f in (once.Filter(capacity=5000, seed=1), once.Filter(seed=1),
              once.Window(span="1h", seed=1), once.Window(count=500, seed=1)):
        f.add_many(["k%d" % i for i in range(3000)], *([1000] if f._core.timed else []))
        path = tmp_path / "f.once"
        f.save(path)
        for copy in (once.load(path), once.load(str(path)), once.loads(bytes(f)),
                     pickle.loads(pickle.dumps(f))):
            assert type(copy) is type(f) and bytes(copy) == bytes(f)
            probe = ["k%d" % i for i in range(0, 6000, 7)]
            at = [1001] if f._core.timed else []
            assert copy.contains_many(probe, *at) == f.contains_many(probe, *at)
        assert not [n for n in os.listdir(tmp_path) if ".tmp." in n]


def test_a_state_from_the_cli_resumes_here_and_back(tmp_path):
    state = tmp_path / "s.once"
    first = ["a%d" % i for i in range(4000)]
    printed = run_cli("--capacity", "10000", "--seed", "5", "--state", str(state),
                      data=lines(first))
    f = once.load(state)
    assert f.stats()["capacity"] == 10000 and f.stats()["seed"] == 5
    assert all(f.contains_many(first))
    assert f.add_many(["b%d" % i for i in range(100)]).count(1) >= 99
    f.save(state)
    again = run_cli("--state", str(state), data=lines(first + ["b5", "c1"]))
    assert again == [b"c1"] and len(printed) >= 3990


def test_the_same_options_and_keys_save_the_clis_bytes(tmp_path):
    keys = ["k%d" % (i % 2500) for i in range(6000)]
    for options, kwargs in ((["--capacity", "5000", "--seed", "9"], {"capacity": 5000}),
                            (["--seed", "9", "--error", "0.01"], {"error": 0.01})):
        state = tmp_path / "cli.once"
        run_cli(*options, "--state", str(state), data=lines(keys))
        f = once.Filter(seed=9, **kwargs)
        f.add_many(keys)
        assert bytes(f) == state.read_bytes(), options
        state.unlink()


def test_damaged_state_is_refused_with_an_exception(tmp_path):
    f = once.Window(span="10m", seed=2)
    f.add_many(["k%d" % i for i in range(100)], at=5000)
    data = bytes(f)
    for cut in range(0, len(data), max(1, len(data) // 200)):
        with pytest.raises(once.CorruptStateError):
            once.loads(data[:cut])
    refused = 0
    for at in range(0, len(data), max(1, len(data) // 300)):
        damaged = bytearray(data)
        damaged[at] ^= 0x5A
        try:
            once.loads(bytes(damaged))
        except once.CorruptStateError:
            refused += 1
    assert refused > 0
    with pytest.raises(TypeError):
        once.loads("not bytes")
    path = tmp_path / "bad.once"
    path.write_bytes(b"once, but not")
    with pytest.raises(once.CorruptStateError):
        once.load(path)
    with pytest.raises(FileNotFoundError):
        once.load(tmp_path / "missing.once")
    with pytest.raises(OSError):
        once.Filter().save(tmp_path / "no" / "such" / "dir.once")


def test_files_are_taken_as_once_state_takes_them(tmp_path):
    # A link is followed: the target is loaded and replaced, the link stays a link.
    f = once.Filter(capacity=1000, seed=3)
    f.add_many(["a", "b"])
    target = tmp_path / "target.once"
    link = tmp_path / "link.once"
    f.save(target)
    link.symlink_to(target)
    f.add("c")
    f.save(link)
    assert link.is_symlink() and all(once.load(target).contains_many(["a", "b", "c"]))
    assert once.load(link).contains("c")
    # A link to nothing is refused, and nothing is written where it points.
    dangling = tmp_path / "dangling.once"
    dangling.symlink_to(tmp_path / "nowhere" / "s.once")
    for call in (lambda: f.save(dangling), lambda: once.load(dangling)):
        with pytest.raises(OSError, match="symbolic link"):
            call()
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()
    # A FIFO or a directory is refused at once, never waited on.
    fifo = tmp_path / "fifo.once"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        for call in (lambda: f.save(path), lambda: once.load(path)):
            with pytest.raises(OSError, match="not a saved filter"):
                call()
    # An empty file holds no filter.
    empty = tmp_path / "empty.once"
    empty.write_bytes(b"")
    with pytest.raises(once.CorruptStateError, match="empty"):
        once.load(empty)
    assert not [n for n in os.listdir(tmp_path) if ".tmp." in n]


def test_a_save_refuses_a_state_a_run_of_the_cli_holds(tmp_path):
    # `once --state` holds the state's lock for its run; a save from Python meanwhile
    # would be overwritten when the run ends, so it is refused (EBUSY), and works after.
    state = tmp_path / "held.once"
    run = subprocess.Popen([ONCE_CLI, "--state", str(state)], stdin=subprocess.PIPE,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=cli_environment())
    try:
        lock = tmp_path / "held.once.lock"
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().strip() == str(run.pid)):
            assert time.monotonic() < deadline and run.poll() is None, "the run never locked"
            time.sleep(0.01)
        f = once.Filter(seed=4)
        f.add("from-python")
        with pytest.raises(OSError) as refused:
            f.save(state)
        assert refused.value.errno == errno.EBUSY and "pid %d" % run.pid in str(refused.value)
        assert not state.exists()
    finally:
        run.communicate(b"from-cli\n", timeout=60)
    assert run.returncode == 0 and once.load(state).contains("from-cli")
    f.save(state)
    assert once.load(state).contains("from-python")
