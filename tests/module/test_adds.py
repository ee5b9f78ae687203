"""Multi-item adds (BF.MADD, BF.INSERT, ONCE.MADD, DBF.MADD) answer, and leave their
filter, exactly as the one-item adds of the same items in order: past the batches the
module hands the library (module/command.c, add_items), with duplicates inside one
command, keys of every length, and a refusal mid-way, whose place holds the error and
after which nothing is added.  But the object's memory limit: a BF.MADD, BF.INSERT,
ONCE.MADD or DBF.MADD that one of its items would take past it is refused whole, its
error the reply, and changes nothing (module/value.c, value_add_items), as Redis
refuses a command past maxmemory; a client that reads only the top-level reply cannot
take it for done."""
import random

import redis

from checks import scandump
from resp import Connection
from server import Server


def items(n, seed):
    """n items with duplicates, an empty one, binary ones and long ones."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.2 and out:
            out.append(rng.choice(out))
        elif roll < 0.25:
            out.append(b"")
        elif roll < 0.35:
            length = rng.choice((1, 15, 16, 17, 64, 1000))
            out.append(bytes(rng.getrandbits(8) for _ in range(length)))
        else:
            out.append(b"item:%d" % rng.randrange(4 * n))
    return out


def answers(replies):
    """Replies comparable across commands: errors by their text."""
    return [str(a) if isinstance(a, redis.ResponseError) else a for a in replies]


def one_by_one(r, command, key, values, at=()):
    """The one-item command for each value, in order, until one is refused."""
    got = []
    for v in values:
        try:
            got.append(r.execute_command(command, key, v, *at))
        except redis.ResponseError as e:
            got.append(str(e))
            break
    return got


def same_as_one_by_one(r, reserve, one, many, values, dump, at=(), prefix=()):
    """Reserve two keys alike, add `values` to one in a single command and to the other
    one at a time (`at` after the item, or before the items: AT ms): the same answers,
    the same dump."""
    r.execute_command(reserve[0], "many", *reserve[1:])
    r.execute_command(reserve[0], "one", *reserve[1:])
    got = answers(r.execute_command(many, "many", *prefix, *at, *values))
    assert got == one_by_one(r, one, "one", values, at), (many, got)
    assert scandump(r, "many", dump) == scandump(r, "one", dump), many
    r.delete("many", "one")
    return got


def test_bloom_adds_match_one_item_adds():
    with Server() as s:
        r = s.client()
        values = items(1000, 1)
        for reserve in (["0.01", "100", "SEED", "3"],          # grows mid-command
                        ["0.001", "100000", "SEED", "4"]):
            got = same_as_one_by_one(r, ["BF.RESERVE"] + reserve, "BF.ADD", "BF.MADD", values,
                                     "BF.SCANDUMP")
            assert 0 in got and 1 in got
            same_as_one_by_one(r, ["BF.RESERVE"] + reserve, "BF.ADD", "BF.INSERT", values,
                               "BF.SCANDUMP", prefix=["NOCREATE", "ITEMS"])


def refused_whole(r, reserve, one, many, values, dump, at=()):
    """Reserve two keys alike: `many` of `values` at once is refused whole at the memory
    limit and leaves its key as it was, where the one-item adds go in until one is
    refused mid-way.  The error and how many items the one-item adds took."""
    r.execute_command(reserve[0], "many", *reserve[1:])
    r.execute_command(reserve[0], "one", *reserve[1:])
    before = scandump(r, "many", dump)
    try:
        r.execute_command(many, "many", *at, *values)
        raise AssertionError("%s was not refused" % many)
    except redis.ResponseError as e:
        error = str(e)
    assert scandump(r, "many", dump) == before, many
    taken = one_by_one(r, one, "one", values, at[2:] if at else ())
    assert taken[-1] == error, (taken[-1], error)
    r.delete("many", "one")
    return error, len(taken) - 1


def test_bloom_refusal_mid_way():
    with Server() as s:
        r = s.client()
        values = [b"k%d" % i for i in range(1000)]
        # Full at its 200 keys, past the first batches of 64; at its 64 sub-filters (128
        # keys): as RedisBloom answers, the error in its item's place.
        for reserve, error in ((["0.01", "200", "NONSCALING"], "non scaling filter is full"),
                               (["0.01", "2", "EXPANSION", "1"], "64 sub-filters")):
            got = same_as_one_by_one(r, ["BF.RESERVE"] + reserve, "BF.ADD", "BF.MADD", values,
                                     "BF.SCANDUMP")
            assert error in got[-1] and 64 < len(got) < 1000, (reserve, len(got), got[-1])
            assert all(a in (0, 1) for a in got[:-1])
        # At its memory limit (some 700 keys): the whole command refused.
        for many, prefix in (("BF.MADD", ()), ("BF.INSERT", ("ITEMS",))):
            error, taken = refused_whole(
                r, ["BF.RESERVE", "0.01", "100", "EXPANSION", "2", "MAXMEMORY", "4096"],
                "BF.ADD", many, values, "BF.SCANDUMP", at=prefix)
            assert "memory limit" in error and 64 < taken < 1000, (many, error, taken)
        # On the wire: the answers before the refused item, then its error, in one array.
        with Connection(s.port, 3) as c:
            c.call("BF.RESERVE", "n", "0.01", "100", "NONSCALING")
            kind, got = c.call("BF.MADD", "n", *values)
            # 100 new ones (a false positive is answered false, and not counted).
            assert kind == "*" and all(a[0] == "#" for a in got[:-1]), kind
            assert sum(a[1] for a in got[:-1]) == 100
            assert got[-1] == ("-", "ERR non scaling filter is full")


def test_window_adds_match_one_item_adds():
    with Server() as s:
        r = s.client()
        values = items(700, 2)
        for reserve in (["WINDOW", "100", "SEED", "5"],
                        ["WINDOW", "64", "FILTER", "apbbf", "SEED", "5"],
                        ["WINDOW", "50", "REFRESH", "SEED", "5"]):
            got = same_as_one_by_one(r, ["ONCE.RESERVE"] + reserve, "ONCE.ADD", "ONCE.MADD",
                                     values, "ONCE.SCANDUMP")
            assert 0 in got and 1 in got
        for reserve in (["SPAN", "1000", "SEED", "6"],
                        ["SPAN", "1000", "FILTER", "timer", "CAPACITY", "50", "SEED", "6"]):
            same_as_one_by_one(r, ["ONCE.RESERVE"] + reserve, "ONCE.ADD", "ONCE.MADD", values,
                               "ONCE.SCANDUMP", at=["AT", 5000])


def test_window_refusal_mid_way():
    with Server() as s:
        r = s.client()
        values = [b"k%d" % i for i in range(3000)]
        # (CLOCK event: the window's clock is fixed before, not by the refused command)
        for reserve in (["SPAN", "600000", "FILTER", "timer", "CAPACITY", "10",
                         "MAXMEMORY", "262144", "SEED", "7", "CLOCK", "event"],
                        ["SPAN", "600000", "CAPACITY", "10", "MAXMEMORY", "16384", "SEED", "7",
                         "CLOCK", "event"]):
            error, taken = refused_whole(r, ["ONCE.RESERVE"] + reserve, "ONCE.ADD", "ONCE.MADD",
                                         values, "ONCE.SCANDUMP", at=("AT", 1000, "AT", 1000))
            assert "memory limit" in error and 64 < taken < 3000, (reserve, error, taken)
        # Within the limit a command goes in whole, as the one-item adds would.
        same_as_one_by_one(r, ["ONCE.RESERVE", "SPAN", "600000", "FILTER", "timer", "CAPACITY",
                               "10", "MAXMEMORY", "262144", "SEED", "7"],
                           "ONCE.ADD", "ONCE.MADD", values[:60], "ONCE.SCANDUMP", at=["AT", 1000])


def test_dbf_adds_match_one_item_adds():
    with Server() as s:
        r = s.client()
        values = items(700, 3)
        got = same_as_one_by_one(r, ["DBF.RESERVE", "0.01", "100", "SEED", "8"], "DBF.ADD",
                                 "DBF.MADD", values, "DBF.SCANDUMP")
        assert 0 in got and 1 in got
        # A present item is inserted again: the count is every insertion.
        r.execute_command("DBF.RESERVE", "d", "0.01", "100")
        r.execute_command("DBF.MADD", "d", *values)
        assert r.execute_command("DBF.CARD", "d") == len(values)
        error, taken = refused_whole(r, ["DBF.RESERVE", "0.01", "20", "MAXMEMORY", "4096"],
                                     "DBF.ADD", "DBF.MADD", [b"k%d" % i for i in range(3000)],
                                     "DBF.SCANDUMP")
        assert "memory limit" in error and 64 < taken < 3000, (error, taken)
