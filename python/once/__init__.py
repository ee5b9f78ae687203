"""once: deliver each event of a stream once, in bounded memory.

Filters that drop repeats over all time (``Filter``), over the last N keys or the
last T of time (``Window``), from the C library behind the ``once`` command line and
the Redis module; and one filter over a Redis Cluster shared by many producers
(``ClusterFilter``).  The options are the command line's: ``Window(span="1h")`` is
``once --span 1h``; the same options and seed build the same filter and answer
alike, and a filter saved here is the state file ``once --state`` reads, and back.

    >>> import once
    >>> f = once.Filter(capacity=1000, seed=7)
    >>> f.add("click:42")          # new: True
    True
    >>> f.add("click:42")          # a repeat
    False
    >>> "click:42" in f
    True
    >>> list(once.Filter(seed=7).dedup(["a", "b", "a", "c", "b"]))
    ['a', 'b', 'c']

Keys are str (their UTF-8 bytes) or bytes-like.  Times are seconds since the epoch
(an int or float, as ``time.time()`` gives, or an aware ``datetime``); a time window
without one takes the wall clock at the call.  Batches (``add_many``,
``contains_many``) take any iterable of keys, or an array of fixed-width keys, and
answer bytes with a 0 or 1 a key; they let other Python threads run meanwhile.

Errors: ``ValueError`` for options and arguments the library refuses (with its
sentence), ``FullError`` when a filter cannot take more keys within its memory cap,
``CorruptStateError`` (a ``ValueError``) for saved bytes that are not a whole filter,
``TimeRefusedError`` for an event time the window's clock refuses, ``OSError`` for
files.
"""
import datetime as _datetime
import time as _time

from . import _once
from ._once import CorruptStateError, FullError, OnceError, TimeRefusedError

__all__ = ["Filter", "Window", "ClusterFilter", "load", "loads", "OnceError", "FullError",
           "CorruptStateError", "TimeRefusedError"]
__version__ = _once.library_version

#: How many keys dedup hands to the library at a time.
_DEDUP_BATCH = 4096


def _ms(at):
    """An event time in whole ms since the epoch, from seconds or a datetime."""
    if isinstance(at, _datetime.datetime):
        if at.tzinfo is None:
            raise ValueError("a datetime for an event time needs its time zone "
                             "(an aware datetime)")
        at = at.timestamp()
    if isinstance(at, bool) or not isinstance(at, (int, float)):
        raise TypeError("an event time is seconds since the epoch (int or float) or an "
                        "aware datetime, not %s" % type(at).__name__)
    if at != at or at < 0 or at == float("inf"):
        raise ValueError("an event time is a number of seconds from 0, not %r" % (at,))
    return round(at * 1000) if isinstance(at, float) else at * 1000


def _option(name, value):
    """One option of the command line, as `once` takes it."""
    if value is True:
        return ["--" + name]
    if isinstance(value, float):
        return ["--" + name, repr(value)]
    return ["--" + name, str(value)]


def _argv(options):
    """The command line of `once` for keyword options (None and False left out)."""
    argv = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        argv += _option(name.replace("_", "-"), value)
    return argv


class _Adds:
    """Times, and the calls that add keys: what every filter offers."""

    __slots__ = ("_core", "_event_time")

    # -- times

    def _at(self, at, write=False):
        if at is not None:
            return _ms(at)
        if not self._core.timed:
            return None
        if not self._event_time:
            return _time.time_ns() // 1000000
        if write:
            raise ValueError("a window on event time takes each key's time (at=)")
        clock = self._core.clock()
        return 0 if clock is None else clock

    def _times(self, at, write):
        """A batch's times: one for every key, or one each (the core checks there are
        as many as keys)."""
        if at is None or isinstance(at, (int, float, _datetime.datetime)):
            return self._at(at, write)
        return [_ms(t) for t in at]

    def add_many(self, keys, at=None):
        """Add every key in order: bytes, 1 for each key that was new.  `keys` is an
        iterable of keys or an array of fixed-width keys (2-D of bytes, a row a key;
        or numpy "S" strings); `at` one time for all or one each."""
        return self._core.add_many(keys, self._times(at, True))

    def dedup(self, items, key=None, at=None):
        """Yield the items seen for the first time, in order: `once` over an iterable.
        `key(item)` gives an item's key (the item itself by default); `at(item)` its
        time, for a time window (the wall clock by default)."""
        batch = []
        for item in items:
            batch.append(item)
            if len(batch) == _DEDUP_BATCH:
                yield from self._new_of(batch, key, at)
                batch = []
        if batch:
            yield from self._new_of(batch, key, at)

    def _new_of(self, batch, key, at):
        keys = batch if key is None else [key(item) for item in batch]
        times = None if at is None else [at(item) for item in batch]
        answers = self.add_many(keys, times)
        return [item for item, new in zip(batch, answers) if new]


class _Base(_Adds):
    """What every filter of this process offers; see Filter and Window."""

    __slots__ = ()

    def __init__(self, max_time_jump="1d", **options):
        self._core = _once.create(_argv(options), str(max_time_jump))

    @classmethod
    def _of(cls, core, event_time=False):
        self = object.__new__(cls)
        self._core = core
        self._event_time = event_time
        return self

    # -- keys

    def add(self, key, at=None):
        """Add `key` (at time `at`, for a time window): True when it is new."""
        return self._core.add(key, self._at(at, True))

    def __contains__(self, key):
        return self._core.contains(key, self._at(None))

    def contains(self, key, at=None):
        """Is `key` there (at time `at`, for a time window)?  Never False for a key
        added within the window; True for an absent key at the false-positive rate."""
        return self._core.contains(key, self._at(at))

    def contains_many(self, keys, at=None):
        """For every key: bytes, 1 for each key that is there."""
        return self._core.contains_many(keys, self._times(at, False))

    # -- what it holds

    def cardinality(self, at=None, confidence=0.9):
        """The distinct keys it holds (a window: within the window at `at`), as
        (estimate, low, high) with probability `confidence` for the interval."""
        ms = self._at(at)
        return self._core.cardinality(ms if ms is not None else 0, confidence)

    def stats(self):
        """What the library reports of the filter: its structure, bytes, items,
        capacity, error, fill and estimated false-positive rate, window, ..."""
        return self._core.stats()

    @property
    def clock(self):
        """A time window's clock, the latest event time written (seconds), or None."""
        ms = self._core.clock()
        return None if ms is None else ms / 1000

    def __len__(self):
        return self._core.stats()["items"]

    # -- saved state

    def __bytes__(self):
        return self._core.save()

    def save(self, path):
        """Write the state to `path` as `once --state` does: a symbolic link is followed
        to its target (a dangling one, or a path that is not a regular file, is
        refused); the bytes go to a temporary file beside it, synced, then renamed over
        it, so a crash leaves the old state or the new."""
        self._core.save_file(path)

    def __reduce__(self):
        return (loads, (self._core.save(), "event" if self._event_time else "clock"))

    def __repr__(self):
        if not hasattr(self, "_core"):
            return "<once.%s (not built)>" % type(self).__name__
        s = self._core.stats()
        return "<once.%s %s, %d items, %d bytes>" % (type(self).__name__, s["structure"],
                                                    s["items"], s["bytes"])


class Filter(_Base):
    """A filter over all time.

    Filter(capacity=None, error=0.001, filter=None, seed=None, max_memory=None)

    Without `capacity` it grows with its keys (the scalable filter, 10^6 keys at a
    time); with one it is a fixed filter of that size (the blocked filter), whose
    false-positive rate rises past `error` beyond it.  `filter` names the structure
    (the names of ``once --help``: blocked, standard, scalable, ...); `seed` fixes the
    hash seed (a random one otherwise); `max_memory` caps a growing filter ("64M").
    """

    __slots__ = ()

    def __init__(self, capacity=None, error=None, filter=None, seed=None, max_memory=None,
                 shards=None):
        self._event_time = False
        super().__init__(capacity=capacity, error=error, filter=filter, seed=seed,
                         max_memory=max_memory, shards=shards)
        if self._core.timed or self._core.count_window:
            raise ValueError("a window is a once.Window")


class Window(_Base):
    """A filter over the last N keys or the last T of time.

    Window(span=None, count=None, capacity=None, error=None, filter=None, seed=None,
           lag=None, refresh=False, level=None, max_memory=None, max_time_jump=None,
           time="clock")

    `span` ("1h", "10m", "30s", "500ms", or seconds) keeps the keys of the last span of
    time.  With time="clock" a call without a time (`at`) is at the wall clock; with
    time="event" every write gives its key's event time, and a query without one asks
    at the window's clock (the latest event time written).  `count` keeps the last N keys.  `capacity` is a time window's first guess of
    the keys a span (it grows past it); `lag` lets events up to that much behind the
    clock be judged at their own time; `refresh` makes a repeat restart its key's
    window; `max_time_jump` bounds how far ahead of the clock an event may be (a day by
    default).  The rest as for Filter.
    """

    __slots__ = ()

    def __init__(self, span=None, count=None, capacity=None, error=None, filter=None,
                 seed=None, lag=None, refresh=False, level=None, max_memory=None,
                 max_time_jump=None, shards=None, time="clock"):
        self._event_time = _event_time(time)
        if (span is None) == (count is None):
            raise ValueError("a Window keeps a span of time (span=) or a count of keys "
                             "(count=): one of them")
        if isinstance(span, (int, float)) and not isinstance(span, bool):
            span = "%dms" % round(span * 1000)
        super().__init__(span=span, window=count, capacity=capacity, error=error,
                         filter=filter, seed=seed, lag=lag, refresh=refresh, level=level,
                         max_memory=max_memory, shards=shards,
                         max_time_jump="1d" if max_time_jump is None else max_time_jump)


class ClusterFilter(_Adds):
    """One filter sliced over a Redis Cluster (the nodes load the module), shared by
    every producer that opens it by its name: a key new to one is a repeat to all.

    ClusterFilter(cluster, key, slicing=None, slices=None, span=None, count=None,
                  capacity=None, error=None, seed=None, filter=None, lag=None,
                  on_failed_slice=None, failover_hold=None, wait=False,
                  local_filter=False, time="clock")

    `cluster` is "host:port" of one node or more (comma-separated); `key` the filter's
    name.  The rest are `once --cluster`'s options (docs/CLUSTER.md): whole slices by
    default (16 filters on the cluster's keys), slices of cells with `slicing`
    ("vertical", "horizontal", "diced"), a time window with `span`, a count window
    with `count`; `on_failed_slice` decides the keys of a slice that cannot answer
    ("distinct", the default, "duplicate", or "threshold:X").  The first producer
    makes the filter; the others must ask for the same one.  It answers add and
    add_many (a test of a key alone would race the other producers); close() (or the
    end of a with block) sends what it still owes.  A cluster that cannot be reached
    raises ConnectionError.
    """

    __slots__ = ()

    def __init__(self, cluster, key, slicing=None, slices=None, span=None, count=None,
                 capacity=None, error=None, seed=None, filter=None, lag=None,
                 on_failed_slice=None, failover_hold=None, wait=False, local_filter=False,
                 time="clock"):
        self._event_time = _event_time(time)
        if isinstance(span, (int, float)) and not isinstance(span, bool):
            span = "%dms" % round(span * 1000)
        self._core = _once.open_cluster(_argv(dict(
            cluster=cluster, key=key, slicing=slicing, slices=slices, span=span,
            window=count, capacity=capacity, error=error, seed=seed, filter=filter, lag=lag,
            on_failed_slice=on_failed_slice, failover_hold=failover_hold, wait=wait,
            local_filter=local_filter)))

    def add(self, key, at=None):
        """Add `key` (at time `at`, for a window): True when it is new to the cluster."""
        return self.add_many([key], None if at is None else [at])[0] == 1

    def flush(self):
        """Send now what the last batches owe (claims, and keys delivered while their
        slice failed, once it answers); close() does it too."""
        self._core.flush()

    def close(self):
        """Flush, and let go of the cluster's connections."""
        self._core.close()

    def stats(self):
        """What this producer knows: the layout, nodes, slices, events, failures, ..."""
        return self._core.stats()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<once.ClusterFilter>"


def _event_time(time):
    """Whether `time` (a constructor's or a loader's) says each write gives its key's
    time; ValueError for anything but "clock" and "event"."""
    if time not in ("clock", "event"):
        raise ValueError("time is \"clock\" (the wall clock when a call gives no time) "
                         "or \"event\" (every write gives its key's time), not %r" % (time,))
    return time == "event"


def _wrap(core, event_time=False):
    return (Window if core.timed or core.count_window else Filter)._of(core, event_time)


def loads(data, time="clock"):
    """The filter saved in `data` (bytes(f), f.save, `once --state`); `time` as for
    Window (a state keeps its clock, not how its callers tell time)."""
    return _wrap(_once.loads(data), _event_time(time))


def load(path, time="clock"):
    """The filter saved in the file at `path`, read as `once --state` reads it: a link
    is followed; a FIFO, a directory or a dangling link is refused (OSError) rather
    than waited on or taken for a new filter; bytes that are not a filter raise
    CorruptStateError."""
    return _wrap(_once.load_file(path), _event_time(time))
