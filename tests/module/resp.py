"""A raw RESP2/RESP3 connection that returns replies with their wire types.

redis-py (Debian's 4.3) speaks RESP2 only and converts what it reads; to check the exact
shapes a RESP3 client receives (booleans, maps, nulls, doubles) the tests read the
server's bytes here.  Each reply is (type, value): type is the RESP type byte ('+' simple
string, '-' error, ':' integer, '$' bulk, '*' array, '%' map, '#' boolean, '_' null,
',' double, '~' set, '>' push); arrays and sets hold replies, maps lists of pairs.
"""
import socket


class Connection:
    def __init__(self, port, protocol=2):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""
        if protocol == 3:
            kind, _ = self.call("HELLO", "3")
            assert kind == "%", kind

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            if not isinstance(a, bytes):
                a = str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(parts))

    def call(self, *args):
        self.send(*args)
        return self.read()

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = chr(line[0]), line[1:]
        if kind in "+-":
            return kind, rest.decode()
        if kind == ":":
            return kind, int(rest)
        if kind == ",":
            return kind, float(rest)
        if kind == "#":
            return kind, rest == b"t"
        if kind == "_":
            return kind, None
        if kind in "$=":
            n = int(rest)
            return ("$", None) if n < 0 else ("$", self._exact(n))
        if kind in "*~>":
            n = int(rest)
            if n < 0:
                return kind, None
            return kind, [self.read() for _ in range(n)]
        if kind == "%":
            n = int(rest)
            return kind, [(self.read(), self.read()) for _ in range(n)]
        raise ValueError("unknown reply type %r" % line)
