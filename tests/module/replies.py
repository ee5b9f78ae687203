"""Replies as data/format1 records them: what data/format1/make.py wrote with the module
of format 1 and what test_format1.py reads back from the module under test, in one place
so the two cannot drift."""
import redis

PREFIX = {"bf": "BF", "once": "ONCE", "dbf": "DBF"}


def run(r, args):
    """A command's reply, or its error as a value."""
    try:
        return r.execute_command(*args)
    except redis.ResponseError as e:
        return e


def norm(x):
    """A reply as JSON: bulk strings as Latin-1 text, errors as {"error": text}."""
    if isinstance(x, list):
        return [norm(v) for v in x]
    if isinstance(x, bytes):
        return x.decode("latin-1")
    if isinstance(x, redis.ResponseError):
        return {"error": str(x)}
    return x


def info(r, kind, key):
    """The INFO reply as {label: value}."""
    flat = norm(r.execute_command(PREFIX[kind] + ".INFO", key))
    return dict(zip(flat[0::2], flat[1::2]))


def cards(r, kind, key, times):
    """CARD at each time (ONCE), or CARD and CARD ESTIMATE (BF, DBF)."""
    if kind == "once":
        return [norm(r.execute_command("ONCE.CARD", key, "AT", t)) for t in times]
    return [norm(r.execute_command(PREFIX[kind] + ".CARD", key)),
            norm(r.execute_command(PREFIX[kind] + ".CARD", key, "ESTIMATE"))]
