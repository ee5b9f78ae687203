"""What the package's tests share: the CLI of the same build (ONCE_CLI), and a seed."""
import os
import subprocess

import pytest

#: The `once` of the same build, whose answers and state files the package must match.
ONCE_CLI = os.environ.get("ONCE_CLI", "once")


def cli_environment():
    """The environment a CLI runs in: without the interpreter's preloaded sanitizer
    runtime (the sanitizer build's CLI carries its own)."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def run_cli(*args, data=b""):
    """Run `once ARGS` on `data`: its output lines (bytes)."""
    p = subprocess.run([ONCE_CLI, *args], input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, env=cli_environment())
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.splitlines()


@pytest.fixture
def cli():
    return run_cli
