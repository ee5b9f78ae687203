"""The module's settings: CONFIG GET/SET once.<name> and the loadmodule words."""
import redis

from server import Server


def settings(r):
    return {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
            for k, v in r.config_get("once.*").items()}


def test_defaults():
    with Server(fixed_seeds=False) as s:
        got = settings(s.client())
        assert got == {"once.error-rate": "0.01", "once.initial-capacity": "100",
                       "once.expansion": "2", "once.max-memory": str(128 << 20),
                       "once.random-seeds": "yes", "once.default-span": "0"}, got


def test_set_checks_ranges_and_keeps_old_value():
    with Server() as s:
        r = s.client()
        r.config_set("once.error-rate", "0.001")
        assert settings(r)["once.error-rate"] == "0.001"
        # Below 1e-9 no filter plans for its target (ONCE_MIN_ERROR): refused here, not
        # at every ADD that would create a key later.
        for bad in ("0", "1", "-0.5", "abc", "0.5x", "nan", "", "1e-12", "1e-300"):
            try:
                r.config_set("once.error-rate", bad)
            except redis.ResponseError:
                pass
            else:
                raise AssertionError("error rate %r accepted" % bad)
        assert settings(r)["once.error-rate"] == "0.001"
        try:
            r.config_set("once.error-rate", "1e-12")
        except redis.ResponseError as e:
            assert "at least 1e-9 and below 1" in str(e), e
        r.config_set("once.error-rate", "1e-9")
        r.config_set("once.error-rate", "0.001")
        for name, bad in (("once.expansion", "0"), ("once.initial-capacity", "0"),
                          ("once.max-memory", "1"), ("once.random-seeds", "maybe")):
            try:
                r.config_set(name, bad)
            except redis.ResponseError:
                pass
            else:
                raise AssertionError("%s %r accepted" % (name, bad))
        r.config_set("once.max-memory", "1gb")
        assert settings(r)["once.max-memory"] == str(1 << 30)


def test_loadmodule_words_set_values():
    with Server(module_args=["ERROR_RATE", "0.005", "INITIAL_SIZE", "1000",
                             "random-seeds", "no", "expansion", "4"],
                fixed_seeds=False) as s:
        got = settings(s.client())
        assert got["once.error-rate"] == "0.005"
        assert got["once.initial-capacity"] == "1000"
        assert got["once.random-seeds"] == "no"
        assert got["once.expansion"] == "4"


def test_bad_loadmodule_words_refuse_to_load():
    for words in (["ERROR_RATE", "2"], ["INITIAL_SIZE", "0"], ["no-such", "1"],
                  ["expansion"]):
        try:
            Server(module_args=words).stop()
        except RuntimeError as e:
            assert "redis-server did not start" in str(e)
        else:
            raise AssertionError("loaded with %r" % words)
