"""The client side of our port of the official Engine.IO v4 and Socket.IO v5 protocol suites.

The suites (socketio/socket.io: docs/engine.io-protocol/v4-test-suite/test-suite.js and
docs/socket.io-protocol/v5-test-suite/test-suite.js) are mocha scripts using fetch and the `ws`
WebSocket. This module gives the tests the same few primitives in Python:

- `fetch(method, url, body)`: one HTTP request, its status and body (connections are kept alive
  and reused within a case, as by the suites' fetch);
- `WS(url)`: a WebSocket whose frames are read in order, with `recv()` (the suite's
  `waitFor(socket, "message")`), `recv_skipping_pings()` (the Socket.IO suite's `waitForPackets`,
  which ignores PING packets) and `wait_close()` (`waitFor(socket, "close")`);
- `init_long_polling_session(path)`: the suites' `initLongPollingSession()`.

The server is `CONFORMANCE_URL` (default http://127.0.0.1:3000, the suites' port). The suites'
server runs with pingInterval 300 ms and pingTimeout 200 ms. Where the suite waits for a packet
or for the socket to close, we wait for that condition with an upper bound of `WAIT` seconds
(`CONFORMANCE_WAIT`, default 10): CI is a busy 2-core machine, and nothing here assumes a fast one.

Where we depart from the letter of a suite to stay robust, the case says so in a comment:
- a case whose expected bytes assume it runs inside the session's first ping interval retries
  (`within_ping_interval`) only when it measured that the interval was overrun;
- PINGs that arrive where the suite expects another packet are skipped and answered
  (`recv_skipping_pings`), as the Socket.IO suite's waitForPackets() skips them;
- where a case waits for the server to close a socket because of an invalid packet, PINGs are
  answered so that the ping timeout cannot be what closes it (`wait_close(pong=True)`);
- "closes the session upon ping timeout" over polling gives a late timer until `WAIT`.
"""

import json
import os
import socket
import threading
import time
import urllib.parse

import requests
import websocket

BASE_URL = os.environ.get("CONFORMANCE_URL", "http://127.0.0.1:3000").rstrip("/")
WS_BASE_URL = "ws" + BASE_URL[len("http"):] if BASE_URL.startswith("http") else BASE_URL

# The suites' constants.
PING_INTERVAL_MS = 300
PING_TIMEOUT_MS = 200
MAX_PAYLOAD = 1000000
PING_INTERVAL = PING_INTERVAL_MS / 1000
PING_TIMEOUT = PING_TIMEOUT_MS / 1000

# The upper bound of every wait for a condition (a packet, a close, an HTTP answer).
WAIT = float(os.environ.get("CONFORMANCE_WAIT", "10"))

SEPARATOR = "\x1e"  # the record separator between packets of a polling payload


def url(path, query=""):
    """`${URL}/<path>/?<query>`, spelled as the suites spell it."""
    return f"{BASE_URL}/{path}/?{query}"


def ws_url(path, query=""):
    return f"{WS_BASE_URL}/{path}/?{query}"


class Response:
    def __init__(self, status, content):
        self.status = status
        self.content = content  # bytes

    @property
    def text(self):
        return self.content.decode("utf-8")

    def __repr__(self):
        return f"<HTTP {self.status} {self.content!r}>"


_http = None


def http_session():
    """The case's HTTP client. Like the suites' fetch (Node's global agent keeps connections
    alive), it reuses an idle connection for the next request: a POST and the GET after it often
    travel on one connection, which is how the suites meet the server. A new one per case
    (reset_http_session, called after each case)."""
    global _http
    if _http is None:
        _http = requests.Session()
    return _http


def reset_http_session():
    global _http
    if _http is not None:
        _http.close()
        _http = None


def fetch(method, target, body=None, timeout=WAIT):
    """One request, as the suites' fetch(url, {method, body}): the status and the body.

    A GET on a polling session is a long poll: it may legitimately wait for up to one ping
    interval, so the timeout is `WAIT`, far beyond it.
    """
    data = body.encode("utf-8") if isinstance(body, str) else body
    headers = {}
    if data is not None:
        headers["Content-Type"] = "text/plain;charset=UTF-8"
    response = http_session().request(method.upper(), target, data=data, headers=headers,
                                      timeout=timeout, allow_redirects=False)
    return Response(response.status_code, response.content)


class Session:
    """An Engine.IO session opened over polling: its sid and when its handshake arrived."""

    def __init__(self, path, sid, opened_at):
        self.path = path
        self.sid = sid
        self.opened_at = opened_at

    def url(self, extra=""):
        return url(self.path, f"EIO=4&transport=polling&sid={self.sid}{extra}")

    def ws_url(self):
        return ws_url(self.path, f"EIO=4&transport=websocket&sid={self.sid}")

    def age(self):
        return time.monotonic() - self.opened_at


def init_long_polling_session(path):
    """The suites' initLongPollingSession(): GET the handshake and keep its sid."""
    response = fetch("GET", url(path, "EIO=4&transport=polling"))
    opened_at = time.monotonic()
    assert response.status == 200, f"handshake: expected HTTP 200, got {response!r}"
    return Session(path, json.loads(response.text[1:])["sid"], opened_at)


def in_background(function, *args, **kwargs):
    """Runs `function` on a thread (the suites' concurrent fetches in Promise.all); `.result()`
    waits for it and returns its value or raises its exception."""
    box = {}

    def run():
        try:
            box["value"] = function(*args, **kwargs)
        except BaseException as error:  # re-raised in the test's thread
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    class Pending:
        @staticmethod
        def result(timeout=WAIT + 5):
            thread.join(timeout)
            assert not thread.is_alive(), f"no answer within {timeout} s"
            if "error" in box:
                raise box["error"]
            return box["value"]

    return Pending()


def send_raw_request_then_abort(target, delay):
    """Sends a GET on a raw TCP connection and closes that connection `delay` seconds later
    without reading the answer: the suites' fetch() aborted by an AbortController."""
    parsed = urllib.parse.urlsplit(target)
    connection = socket.create_connection((parsed.hostname, parsed.port or 80), timeout=WAIT)
    try:
        request = (f"GET {parsed.path}?{parsed.query} HTTP/1.1\r\n"
                   f"Host: {parsed.netloc}\r\nAccept: */*\r\n\r\n")
        connection.sendall(request.encode("ascii"))
        time.sleep(delay)
    finally:
        connection.close()


class Late(Exception):
    """The run was slower than the suite's timing window allows (for instance a ping interval
    elapsed before the step that must precede the first PING): the case is retried."""


def within_ping_interval(attempts=3):
    """Retries a case whose expected bytes assume it runs inside the first ping interval of its
    session (300 ms), which the suites take for granted on their fast machine. A case retries
    only when it raised `Late`, i.e. when we measured that the window had passed: a server that
    answers wrongly inside the window still fails at once."""

    def decorate(test):
        def run(*args, **kwargs):
            for attempt in range(1, attempts + 1):
                try:
                    return test(*args, **kwargs)
                except Late as late:
                    if attempt == attempts:
                        raise AssertionError(
                            f"{attempts} attempts were all slower than the suite's timing "
                            f"window ({late}); the machine is too busy to run this case") from late
                    close_all()

        run.__name__ = test.__name__
        run.__doc__ = test.__doc__
        return run

    return decorate


class Closed(Exception):
    """The WebSocket closed (close frame or end of the TCP stream)."""


_open_sockets = []


def close_all():
    while _open_sockets:
        _open_sockets.pop().close()
    reset_http_session()


class WS:
    """A WebSocket opened like the suites' createWebSocket(url): `open` is the end of the
    opening handshake (raises if it fails), frames are then read in order."""

    def __init__(self, target, timeout=WAIT):
        self.url = target
        self.closed = False
        self.ws = websocket.create_connection(target, timeout=timeout, suppress_origin=True,
                                              skip_utf8_validation=True)
        _open_sockets.append(self)

    @classmethod
    def expect_close(cls, target, timeout=WAIT, refusal_ok=True):
        """The suites' `createWebSocket(url)` + `waitFor(socket, "close")` for a URL the server
        must refuse: either the opening handshake fails (ws emits "error" then "close"; the
        suites listen to "error" in those cases) or it succeeds and the server closes the socket
        within `timeout`. Without `refusal_ok` only the latter passes: where the suite installs
        no "error" listener, a refused handshake is an uncaught error in Node and the case fails."""
        try:
            socket_ = cls(target, timeout=timeout)
        except (websocket.WebSocketException, OSError) as error:
            assert refusal_ok, (
                f"the opening handshake was refused ({error}); the suite expects it to succeed "
                "and the server to close the WebSocket (a refusal is an uncaught 'error' event "
                "in the suite's Node run)")
            return "refused at the opening handshake"
        socket_.wait_close(timeout)
        return "closed after the opening handshake"

    def send(self, data):
        if isinstance(data, str):
            self.ws.send(data)
        else:
            self.ws.send_binary(bytes(data))

    def recv(self, timeout=WAIT):
        """The next text (str) or binary (bytes) message; raises Closed if the socket closes
        first, AssertionError if nothing arrives within `timeout`."""
        if self.closed:
            raise Closed("the socket is closed")
        self.ws.settimeout(timeout)
        try:
            opcode, data = self.ws.recv_data()
        except websocket.WebSocketTimeoutException:
            raise AssertionError(f"no message within {timeout} s") from None
        except (websocket.WebSocketConnectionClosedException, ConnectionError, OSError) as error:
            self.closed = True
            raise Closed(str(error)) from None
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            self.closed = True
            raise Closed("close frame")
        if opcode == websocket.ABNF.OPCODE_TEXT:
            return data.decode("utf-8")
        return bytes(data)

    def recv_skipping_pings(self, timeout=WAIT, pong=True):
        """The next message that is not an Engine.IO PING ("2"), as the Socket.IO suite's
        waitForPackets() reads them. Each skipped PING is answered with a PONG ("3") when `pong`
        is set: a PING only arrives here when the run was slower than the suite assumes (300 ms),
        and without the PONG the server would close the session 200 ms later, in the middle of
        a case that is not about heartbeats."""
        deadline = time.monotonic() + timeout
        while True:
            data = self.recv(max(0.01, deadline - time.monotonic()))
            if data == "2":
                if pong:
                    self.send("3")
                continue
            return data

    def wait_close(self, timeout=WAIT, pong=False):
        """Waits for the socket to close (the suites' waitFor(socket, "close"), which buffers
        and ignores the messages that arrive meanwhile); returns those messages. Fails if the
        socket is still open after `timeout`.

        With `pong`, each PING ("2") meanwhile is answered with a PONG ("3"). The suites never
        answer PINGs, so with pingInterval 300 ms and pingTimeout 200 ms *every* Engine.IO session
        they wait on closes within ~500 ms whatever the server thinks of the packet under test:
        "closes the connection upon invalid format" would pass against a server that ignores the
        invalid packet. Answering the PINGs keeps the heartbeat alive so that only the cause the
        case is about can close the socket."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"the socket was not closed within {timeout} s (messages meanwhile: {seen!r})")
            try:
                data = self.recv(remaining)
            except Closed:
                return seen
            except AssertionError:
                continue  # nothing within `remaining`: the check above reports it
            seen.append(data)
            if pong and data == "2":
                try:
                    self.send("3")
                except Exception:
                    pass  # closing under us: the next recv() says so

    def close(self):
        if self in _open_sockets:
            _open_sockets.remove(self)
        try:
            self.ws.close(timeout=1)
        except Exception:
            pass
        self.closed = True


def assert_open_packet(data, upgrades):
    """The handshake checks both suites make on an Engine.IO OPEN packet."""
    assert isinstance(data, str) and data.startswith("0"), f"expected an OPEN packet, got {data!r}"
    value = json.loads(data[1:])
    assert isinstance(value, dict) and set(value) == {
        "sid", "upgrades", "pingInterval", "pingTimeout", "maxPayload"}, \
        f"expected exactly the keys sid, upgrades, pingInterval, pingTimeout, maxPayload: {data!r}"
    assert isinstance(value["sid"], str), data
    assert value["upgrades"] == upgrades, data
    assert value["pingInterval"] == PING_INTERVAL_MS, data
    assert value["pingTimeout"] == PING_TIMEOUT_MS, data
    assert value["maxPayload"] == MAX_PAYLOAD, data
    return value


def assert_handshake_sid(data, prefix):
    """`expect(data).to.startsWith(prefix)`, then the rest is exactly {"sid": <string>}."""
    assert isinstance(data, str) and data.startswith(prefix), \
        f"expected a CONNECT answer starting {prefix!r}, got {data!r}"
    handshake = json.loads(data[len(prefix):])
    assert isinstance(handshake, dict) and set(handshake) == {"sid"}, \
        f"expected exactly the key sid: {data!r}"
    assert isinstance(handshake["sid"], str), data
