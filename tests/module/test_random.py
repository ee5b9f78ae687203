"""Bad input: 10^5 random and malformed commands over every command of the module, with a
fixed seed (ONCE_TEST_SEED replays another).  The server stays up, every reply is a value
or an error, and what the commands left behind still saves, reloads and dumps alike."""
import os
import random

from resp import Connection
from server import Server

SEED = int(os.environ.get("ONCE_TEST_SEED", "20261123"))
COMMANDS = 100_000
KEYS = [b"k%d" % i for i in range(12)] + [b"str", b""]

WORDS = [b"EXPANSION", b"NONSCALING", b"SEED", b"ITEMS", b"NOCREATE", b"CAPACITY", b"ERROR",
         b"WINDOW", b"SPAN", b"LEVEL", b"FILTER", b"REFRESH", b"MAXJUMP", b"AT", b"ESTIMATE",
         b"CONFIDENCE", b"apbf", b"apbbf", b"tlbf", b"timer", b"blocked", b"items",
         b"capacity", b"size", b"filters", b"expansion"]
NUMBERS = [b"0", b"1", b"2", b"-1", b"3", b"10", b"100", b"1000", b"0.01", b"0.5", b"1e-9",
           b"0.999999", b"1.5", b"nan", b"inf", b"-inf", b"1e308", b"9223372036854775807",
           b"-9223372036854775808", b"18446744073709551615", b"99999999999999999999",
           b"4611686018427387904", b"86400001", b" 1", b"1 ", b"0x10", b"", b"+5", b"1e3"]


def random_bytes(rng):
    n = rng.choice((0, 1, 2, 8, 40, 300, 5000))
    return bytes(rng.getrandbits(8) for _ in range(n))


def argument(rng, chunks):
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(WORDS)
    if roll < 0.6:
        return rng.choice(NUMBERS)
    if roll < 0.7 and chunks:
        chunk = bytearray(rng.choice(chunks))
        if chunk and rng.random() < 0.5:
            chunk[rng.randrange(len(chunk))] ^= 1 << rng.randrange(8)
        return bytes(chunk)
    if roll < 0.85:
        return b"item%d" % rng.randrange(50)
    return random_bytes(rng)


def well_formed(rng, names):
    """A command a client would send, so that filters of every kind exist and grow."""
    key = rng.choice(KEYS[:12])
    kind = rng.randrange(6)
    if kind == 0:
        return [b"BF.RESERVE", key, rng.choice([b"0.01", b"0.001"]),
                rng.choice([b"10", b"100", b"1000"])] + rng.choice(
                    [[], [b"NONSCALING"], [b"EXPANSION", b"3"]])
    if kind == 1:
        return [b"ONCE.RESERVE", key] + rng.choice(
            [[b"WINDOW", b"100"], [b"SPAN", b"1000"], [b"SPAN", b"500", b"FILTER", b"timer"],
             [b"WINDOW", b"64", b"FILTER", b"apbbf"]])
    if kind == 2:
        return [b"DBF.RESERVE", key, b"0.01", rng.choice([b"5", b"50"])]
    prefix = rng.choice([b"BF", b"ONCE", b"DBF"])
    items = [b"item%d" % rng.randrange(300) for _ in range(rng.randrange(1, 20))]
    if prefix == b"ONCE" and rng.random() < 0.5:
        return [b"ONCE.MADD", key, b"AT", b"%d" % rng.randrange(0, 10 ** 7)] + items
    return [prefix + b".MADD", key] + items


def test_random_commands_keep_the_server_up():
    rng = random.Random(SEED)
    with Server(module_args=["max-memory", str(8 << 20)]) as s:
        with Connection(s.port, 2) as c:
            kind, listed = c.call("COMMAND", "LIST", "FILTERBY", "MODULE", "once")
        names = sorted(v for _, v in listed)
        assert len(names) >= 29, names
        names = [n.upper() for n in names]
        chunks = []
        with Connection(s.port, 2) as c:
            c.call("SET", "str", "v")
            sent = 0
            while sent < COMMANDS:
                batch = []
                for _ in range(1000):
                    if rng.random() < 0.25:
                        batch.append(well_formed(rng, names))
                        continue
                    name = rng.choice(names)
                    if rng.random() < 0.05:
                        name = name.lower()
                    args = [name, rng.choice(KEYS)] if rng.random() < 0.95 else [name]
                    args += [argument(rng, chunks) for _ in range(rng.randrange(0, 8))]
                    if name.endswith(b"SCANDUMP") and rng.random() < 0.5:
                        args = [name, rng.choice(KEYS), b"0"]
                    batch.append(args)
                for args in batch:
                    c.send(*args)
                for args in batch:
                    kind, value = c.read()
                    assert kind in "+-:$*%#,_", (args, kind)
                    if (kind == "*" and value and len(value) == 2 and value[1][0] == "$"
                            and args[0].endswith(b"SCANDUMP") and value[1][1]):
                        chunks.append(value[1][1])
                        chunks[:] = chunks[-20:]
                sent += len(batch)
            assert c.call("PING") == ("+", "PONG")
        assert s.alive()
        r = s.client()
        # Whatever the commands left behind saves and loads back alike.
        ours = [k for k in KEYS if r.exists(k) and r.type(k) not in (b"string", b"none")]
        assert ours, "no filter survived the run"
        before = {k: (r.type(k), r.execute_command("DEBUG", "DIGEST-VALUE", k)) for k in ours}
        r.execute_command("DEBUG", "RELOAD")
        after = {k: (r.type(k), r.execute_command("DEBUG", "DIGEST-VALUE", k)) for k in ours}
        assert after == before
