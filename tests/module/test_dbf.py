"""DBF.*: the Dynamic Bloom Filter of paper 003, a set that grows by rows and deletes."""
import redis

from checks import err, fill_to_the_limit, wait_synced
from server import Server


def info(r, key):
    flat = r.execute_command("DBF.INFO", key)
    return dict(zip(flat[::2], flat[1::2]))


def test_add_exists_delete_and_count():
    with Server() as s:
        r = s.client()
        assert r.execute_command("DBF.RESERVE", "d", "0.01", "1000") == b"OK"
        assert r.execute_command("DBF.ADD", "d", "a") == 1
        assert r.execute_command("DBF.ADD", "d", "a") == 0  # present, counted again
        assert r.execute_command("DBF.MADD", "d", "b", "c") == [1, 1]
        assert r.execute_command("DBF.CARD", "d") == 4
        assert r.execute_command("DBF.DEL", "d", "a") == 1
        assert r.execute_command("DBF.EXISTS", "d", "a") == 1  # inserted twice
        assert r.execute_command("DBF.DEL", "d", "a") == 1
        assert r.execute_command("DBF.EXISTS", "d", "a") == 0
        assert r.execute_command("DBF.DEL", "d", "a") == 0
        assert r.execute_command("DBF.MEXISTS", "d", "a", "b", "c") == [0, 1, 1]
        assert r.execute_command("DBF.CARD", "d") == 2
        assert r.execute_command("DBF.DEL", "missing", "a") == 0
        assert r.execute_command("DBF.EXISTS", "missing", "a") == 0
        assert r.execute_command("DBF.CARD", "missing") == 0
        # A DBF created here is saved in format 2 and places keys with the mixed probe.
        assert (info(r, "d")[b"Format"], info(r, "d")[b"Probe"]) == (2, b"mixed")


def test_grows_by_rows_without_false_negatives_after_deletes():
    with Server() as s:
        r = s.client()
        r.execute_command("DBF.RESERVE", "d", "0.01", "500", "SEED", 12)
        keys = ["k%d" % i for i in range(4000)]
        for start in range(0, len(keys), 500):
            r.execute_command("DBF.MADD", "d", *keys[start:start + 500])
        assert info(r, "d")[b"Rows"] >= 8
        deleted, refused = set(), 0
        for k in keys[::2]:
            try:
                if r.execute_command("DBF.DEL", "d", k) == 1:
                    deleted.add(k)
            except redis.ResponseError as e:
                assert "multiple-address" in str(e)
                refused += 1
        assert len(deleted) > 1000
        kept = [k for k in keys if k not in deleted]
        for start in range(0, len(kept), 500):
            assert r.execute_command("DBF.MEXISTS", "d", *kept[start:start + 500]) == [1] * len(
                kept[start:start + 500])
        assert r.execute_command("DBF.CARD", "d") == len(keys) - len(deleted)


def test_multiple_address_delete_is_refused_and_changes_nothing():
    with Server() as s:
        r = s.client()
        r.execute_command("DBF.RESERVE", "d", "0.01", "10", "SEED", 1)
        r.execute_command("DBF.ADD", "d", "x")
        r.execute_command("DBF.MADD", "d", *["f%d" % i for i in range(9)])  # row 1 full
        r.execute_command("DBF.ADD", "d", "x")  # row 2 holds x too
        assert info(r, "d")[b"Rows"] == 2
        before = r.execute_command("DBF.SCANDUMP", "d", 0)
        got = err(r, "DBF.DEL", "d", "x")
        assert got == ("cannot delete: several rows hold the item's cells (the "
                       "multiple-address problem); deleting from one could erase other items")
        assert r.execute_command("DBF.SCANDUMP", "d", 0) == before
        assert r.execute_command("DBF.EXISTS", "d", "x") == 1


def test_errors():
    with Server(module_args=["max-memory", str(1 << 20)]) as s:
        r = s.client()
        r.set("str", "v")
        r.execute_command("DBF.RESERVE", "d", "0.01", "100")
        cases = [
            (("DBF.RESERVE", "d", "0.01", "100"), "item exists"),
            (("DBF.RESERVE", "x", "2", "100"), "(0 < error rate range < 1)"),
            (("DBF.RESERVE", "x", "0.01", "0"), "(capacity should be larger than 0)"),
            (("DBF.RESERVE", "x", "0.01", "10", "BOGUS", "1"), "unknown argument received"),
            (("DBF.RESERVE", "x", "0.01", "10", "SEED"), "no seed"),
            (("DBF.RESERVE", "x", "0.0001", "100000000"),
             "operation exceeds the object's memory limit (once.max-memory)"),
            (("DBF.DEL", "d"), "wrong number of arguments for 'dbf.del' command"),
            (("DBF.INFO", "missing"), "not found"),
            (("DBF.CARD", "d", "ESTIMATE", "CONFIDENCE", "0"),
             "confidence must be a number in (0, 1)"),
        ]
        for args, expected in cases:
            got = err(r, *args)
            assert got == expected, (args, got, expected)
        for args in (("DBF.ADD", "str", "a"), ("DBF.DEL", "str", "a"), ("DBF.EXISTS", "str", "a"),
                     ("BF.ADD", "d", "a"), ("ONCE.ADD", "d", "a")):
            assert err(r, *args).startswith("WRONGTYPE"), args
        assert r.exists("x") == 0
        # Rows stop at the memory limit: a DBF.MADD past it is refused whole, then
        # items one at a time go in until one is refused, and nothing changes after.
        r.execute_command("DBF.RESERVE", "g", "0.01", "2000", "SEED", 2)
        fill_to_the_limit(r, "g", "DBF.MADD", "DBF.ADD", 1000, "DBF.SCANDUMP")
        before = r.execute_command("DBF.SCANDUMP", "g", 0)
        assert "memory limit" in err(r, "DBF.ADD", "g", "one-more-new-key")
        assert r.execute_command("DBF.SCANDUMP", "g", 0) == before


def test_card_estimate():
    with Server() as s:
        r = s.client()
        r.execute_command("DBF.RESERVE", "d", "0.01", "5000", "SEED", 6)
        for start in range(0, 12000, 1000):
            r.execute_command("DBF.MADD", "d", *["k%d" % i for i in range(start, start + 1000)])
        est, low, high = (float(x) for x in r.execute_command("DBF.CARD", "d", "ESTIMATE",
                                                              "CONFIDENCE", "0.99"))
        assert low <= 12000 <= high, (est, low, high)


def test_replica_and_reload_keep_identical_bytes():
    with Server(fixed_seeds=False) as master:
        with master.replica(fixed_seeds=False) as replica:
            m, rep = master.client(), replica.client()
            m.execute_command("DBF.RESERVE", "d", "0.01", "300")
            m.execute_command("DBF.MADD", "auto", "a", "b")
            for i in range(1000):
                m.execute_command("DBF.ADD", "d", "k%d" % i)
            for i in range(0, 1000, 3):
                try:
                    m.execute_command("DBF.DEL", "d", "k%d" % i)
                except redis.ResponseError:
                    pass
            wait_synced(m, rep)
            for key in ("d", "auto"):
                dump = m.execute_command("DBF.SCANDUMP", key, 0)
                assert rep.execute_command("DBF.SCANDUMP", key, 0) == dump, key
                m.execute_command("DEBUG", "RELOAD")
                assert m.execute_command("DBF.SCANDUMP", key, 0) == dump, key
