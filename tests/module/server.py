"""Real redis-server processes for the module's tests.

Each server is Debian's redis-server on a free loopback port, with the module loaded,
daemonized with a pidfile in its own temporary directory, and stopped by that PID (never
by name: tests run in parallel and other jobs share the machine).  Nothing is mocked:
the tests talk to the server through redis-py, redis-cli and node-redis.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"

# An AOF of commands only, no RDB preamble: its rewrite is the module's own (LOADCHUNK
# commands), and a restart replays every command the module replicated.
AOF_COMMANDS = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]


def module_path():
    path = os.environ.get("ONCE_MODULE")
    if not path or not os.path.exists(path):
        raise RuntimeError("ONCE_MODULE must name the built once.so")
    return path


def free_port():
    """A loopback port nobody listens on now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def end_process(pid, seconds=20):
    """End a server we started, by its PID: SIGCONT (a stopped one must be able to end)
    and SIGTERM, then SIGKILL if it lingers past `seconds`; True once it has ended."""
    try:
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if exited(pid):
            return True
        time.sleep(0.01)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    return False


def sanitizer_reports(directory):
    """The sanitizer's reports a server left in its directory (server_environment)."""
    reports = []
    for name in sorted(os.listdir(directory)):
        if name.startswith("sanitizer"):
            with open(os.path.join(directory, name), errors="replace") as f:
                reports.append(f.read())
    return reports


def fail_on_reports(reports):
    """The sanitizer's reports of servers just stopped are a failure of the test."""
    if reports:
        raise AssertionError("the sanitizer reported:\n" + "\n".join(reports))


class Stopped:
    """Servers a test holds in a `with`: stopped (self.stop()) when it ends, however."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def server_environment(directory):
    """A server's environment: under the sanitizer build, the sanitizer runtime
    preloaded (the module leaves its symbols to it), reports written to files in the
    server's directory, which the tests turn into a failure when they stop it."""
    env = dict(os.environ)
    preload = os.environ.get("ONCE_MODULE_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
        report = os.path.join(directory, "sanitizer")
        # The server's own allocations at exit are not leaks of ours.
        env["ASAN_OPTIONS"] = "detect_leaks=0:log_path=" + report
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:log_path=" + report
    return env


def exited(pid):
    """Has the process ended?  A daemonized server is reaped by init, which may take a
    while: a zombie has ended too."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True
    return False


class Server(Stopped):
    """One redis-server.  `module_args` go after --loadmodule; `extra` are more server
    options (e.g. ["--appendonly", "yes"]).  The directory (RDB, AOF) survives
    restart() and goes with stop().  `wrapper` runs the server under a tool (valgrind's
    callgrind, say): its command line goes before the server's."""

    def __init__(self, module_args=(), extra=(), load_module=True, directory=None,
                 fixed_seeds=True, wrapper=()):
        # Tests are deterministic: every filter gets the same seed unless a test asks
        # for the server's random ones.
        self.module_args = (["random-seeds", "no"] if fixed_seeds else []) + list(module_args)
        self.extra = list(extra)
        self.wrapper = list(wrapper)
        self.load_module = load_module
        self.own_dir = directory is None
        self.dir = directory or tempfile.mkdtemp(prefix="once-redis-")
        self.port = None
        self.pid = None
        self.start()

    def command_line(self):
        args = self.wrapper + [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--daemonize", "yes",
                "--pidfile", os.path.join(self.dir, "redis.pid"),
                "--logfile", os.path.join(self.dir, "redis.log"),
                "--dir", self.dir, "--enable-debug-command", "local"]
        if self.load_module:
            args += ["--loadmodule", module_path()] + self.module_args
        return args + self.extra

    def start(self):
        last = None
        for _ in range(20):
            self.port = free_port()
            pidfile = os.path.join(self.dir, "redis.pid")
            if os.path.exists(pidfile):
                os.unlink(pidfile)
            subprocess.run(self.command_line(), check=True, env=self.environment())
            deadline = time.monotonic() + (60 if self.wrapper else 10)
            while time.monotonic() < deadline:
                try:
                    c = self.client()
                    c.ping()
                    with open(pidfile) as f:
                        self.pid = int(f.read().strip())
                    return
                except (redis.exceptions.ConnectionError, FileNotFoundError,
                        ValueError) as e:
                    last = e
                    if self.startup_failed():
                        break
                    time.sleep(0.02)
            if "Address already in use" not in self.log():
                break  # not a lost race for the port: trying again would not help
        log = self.log()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        raise RuntimeError("redis-server did not start: %s\n%s" % (last, log))

    def environment(self):
        return server_environment(self.dir)

    def sanitizer_reports(self):
        return sanitizer_reports(self.dir)

    def startup_failed(self):
        text = self.log()
        return ("Address already in use" in text
                or ("Module" in text and "failed" in text)
                or "Can't load" in text)

    def log(self):
        try:
            with open(os.path.join(self.dir, "redis.log")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=60, **kw)

    def cli(self, *args, resp3=False, raw=False):
        """redis-cli's output for one command (RESP3 with resp3=True)."""
        cmd = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.port)]
        if resp3:
            cmd.append("-3")
        if raw:
            cmd.append("--raw")
        out = subprocess.run(cmd + [str(a) for a in args], check=True,
                             capture_output=True, text=True)
        return out.stdout

    def alive(self):
        if self.pid is None or exited(self.pid):
            return False
        return self.client().ping()

    def stop_process(self):
        """SIGTERM to our own server, by its PID, and wait for it to go."""
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        end_process(pid)

    def replica(self, **kw):
        """A new server (Server's arguments) that replicates this one from its start."""
        return Server(extra=["--replicaof", "127.0.0.1", str(self.port)], **kw)

    def restart(self, extra=None):
        """Stop (a SIGTERM saves the RDB when saving is configured) and start again on
        the same directory."""
        self.stop_process()
        if extra is not None:
            self.extra = list(extra)
        self.start()

    def stop(self):
        self.stop_process()
        reports = self.sanitizer_reports()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        fail_on_reports(reports)
