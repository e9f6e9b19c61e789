"""The reference server's close and refusal rules, on the gateway's own `/socket.io/`.

The official suites (socketio/socket.io `docs/engine.io-protocol/v4-test-suite`,
`docs/socket.io-protocol/v5-test-suite`) define them; each test names the case it follows:

- what cannot be decoded ends the connection (socket.io `lib/client.ts` `onerror`, engine.io
  `lib/socket.ts`), while what decodes but is wrong is answered and the socket stays;
- a client's close over long-polling ends the pending poll with a noop (engine.io
  `transports/polling.ts` `onClose`);
- a WebSocket for a session another WebSocket upgraded is closed (engine.io `Server.onWebSocket`);
- methods other than GET and POST get 400; an unknown namespace gets exactly
  `44/<nsp>,{"message":"Invalid namespace"}`.

And Socket.IO-Client-Swift's reconnect on one engine: `41` then `40` with no payload, its token
still in the connection's query or headers.
"""

import json
import socket
import time
import urllib.error
import urllib.request

import pytest
import websocket

from roomcast_e2e import WAIT, jwt_claims, jwt_sign


def ws_url(node, query=""):
    return f"ws://127.0.0.1:{node.port}/socket.io/?EIO=4&transport=websocket{query}"


def open_websocket(node, query="", header=None):
    ws = websocket.create_connection(ws_url(node, query), timeout=WAIT, header=header)
    opened = ws.recv()
    assert opened.startswith("0{"), opened
    return ws


def connected_websocket(node, token):
    ws = open_websocket(node)
    ws.send("40" + json.dumps({"token": token}))
    answer = ws.recv()
    assert answer.startswith("40{"), answer
    return ws


def next_packet(ws):
    """The next text frame that is not a ping."""
    while True:
        frame = ws.recv()
        if frame != "2":
            return frame


def assert_closed(ws):
    """The server ends the connection: a close frame (or the TCP close) comes before any data."""
    try:
        while True:
            opcode, data = ws.recv_data(control_frame=True)
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                return
            assert opcode == websocket.ABNF.OPCODE_TEXT and data == b"2", f"data instead of a close: {opcode} {data!r}"
    except (websocket.WebSocketConnectionClosedException, ConnectionError):
        return


def polling(node, sid=None, method="GET", body=None):
    """(status, body) of one Engine.IO polling request."""
    query = "/socket.io/?EIO=4&transport=polling" + (f"&sid={sid}" if sid else "")
    request = urllib.request.Request(f"{node.url}{query}", method=method, data=body.encode() if body is not None else None)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def open_polling(node):
    status, opened = polling(node)
    assert status == 200 and opened.startswith("0{"), opened
    return json.loads(opened[1:])["sid"]


# ---------------------------------------------------------------------------------------------
# What cannot be decoded closes; what decodes but is wrong is answered


@pytest.mark.parametrize("packet", ["4abc", "abc"], ids=["invalid handshake", "no Engine.IO packet"])
def test_undecodable_input_before_connect_closes(node1, packet):
    """socket.io v5 suite: "should disallow connection with an invalid handshake"."""
    ws = open_websocket(node1)
    ws.send(packet)
    assert_closed(ws)


@pytest.mark.parametrize("packet", [
    "4abc",                                          # unknown packet type
    "42{}",                                          # event data that is not an array
    '42abc["message-with-ack",1,"2",{"3":[false]}]',  # invalid ack id
    "42[]",                                          # no event name
    '42["connect"]',                                 # a name Socket.IO reserves
    "abc",                                           # no Engine.IO packet at all
], ids=["unknown type", "payload not an array", "invalid ack id", "no event name", "reserved name", "not Engine.IO"])
def test_undecodable_packets_close_the_connection(api, node1, packet):
    """socket.io v5 suite: "should close the connection upon invalid format (…)"."""
    ws = connected_websocket(node1, api.register("garbled").token)
    ws.send(packet)
    assert_closed(ws)


def test_binary_data_outside_a_binary_packet_closes_the_connection(api, node1):
    ws = connected_websocket(node1, api.register("stray").token)
    ws.send_binary(b"\x01\x02\x03")
    assert_closed(ws)


def test_text_where_an_attachment_is_due_closes_the_connection(api, node1):
    """socket.io-parser: "got plaintext data when reconstructing a packet" ends the connection."""
    ws = connected_websocket(node1, api.register("halfbinary").token)
    ws.send('451-["message:send",{"_placeholder":true,"num":0}]')
    ws.send('42["room:leave",{"roomId":"r_none"}]')
    assert_closed(ws)


def test_more_attachments_than_the_bound_close_the_connection(api, node1):
    ws = connected_websocket(node1, api.register("manybinary").token)
    ws.send('4565-["message:send",{}]')
    assert_closed(ws)


def test_binary_attachments_over_polling_are_decoded_and_answered(api, node1):
    """engine.io v4 suite: "sends and receives a payload containing plain text and binary
    packets": a polling body's `b` packets are binary data (base64), as Socket.IO-Client-Swift
    sends a `Data` argument; the event is decoded and answered, and the session stays."""
    sid = open_polling(node1)
    token = api.register("pollbinary").token
    assert polling(node1, sid, "POST", "40" + json.dumps({"token": token})) == (200, "ok")
    assert next_polled(node1, sid, "40{")
    body = '451-7["message:send",{"_placeholder":true,"num":0}]\x1ebAQIDBA=='
    assert polling(node1, sid, "POST", body) == (200, "ok")
    answer = next_polled(node1, sid, "437[")
    assert json.loads(answer[3:])[0]["error"]["code"] == "binary_not_supported", answer
    assert polling(node1, sid, "POST", '428["room:leave",{"roomId":"r_none"}]') == (200, "ok")
    assert next_polled(node1, sid, "438[")


def next_polled(node, sid, prefix):
    """Polls until a packet starting with `prefix` comes (pings are skipped); fails on anything else."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status, body = polling(node, sid)
        assert status == 200, (status, body)
        for packet in body.split("\x1e"):
            if packet.startswith(prefix):
                return packet
            assert packet in ("2", "6"), f"{packet!r} instead of {prefix}"
    raise AssertionError(f"no {prefix} within {WAIT} s")


def test_a_bad_event_that_decodes_is_answered_and_the_socket_stays(api, node1):
    ws = connected_websocket(node1, api.register("wrong").token)
    ws.send('421["no:such:event",{}]')
    answer = next_packet(ws)
    assert answer.startswith("431[") and json.loads(answer[3:])[0]["error"]["code"] == "unknown_event", answer
    ws.send('422["room:join","not an object"]')
    answer = next_packet(ws)
    assert answer.startswith("432[") and json.loads(answer[3:])[0]["error"]["code"] == "invalid_payload", answer
    ws.send('423["room:leave",{"roomId":"r_none"}]')
    assert next_packet(ws).startswith("433["), "the socket no longer answers"
    ws.close()


def test_an_undecodable_polling_body_ends_the_session(node1):
    """engine.io v4 suite: "closes the session upon invalid packet format" (HTTP long-polling)."""
    sid = open_polling(node1)
    status, _ = polling(node1, sid, "POST", "abc")
    assert status == 400
    assert polling(node1, sid) == (400, '{"code":1,"message":"Session ID unknown"}')


# ---------------------------------------------------------------------------------------------
# Forced close, same-sid upgrades, methods, namespaces


def raw_poll(node, sid):
    """A GET poll sent in full on a socket of its own; its answer is read by `read_answer`."""
    connection = socket.create_connection(("127.0.0.1", node.port), timeout=WAIT)
    connection.sendall(f"GET /socket.io/?EIO=4&transport=polling&sid={sid} HTTP/1.1\r\n"
                       f"Host: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    return connection


def read_answer(connection):
    received = b""
    with connection:
        while True:
            chunk = connection.recv(4096)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def test_a_client_close_over_polling_ends_the_pending_poll_with_a_noop(node1):
    """engine.io v4 suite: "forcefully closes the session" (HTTP long-polling). The poll must be
    waiting when the close arrives; where the close overtook it (the session is gone then, and
    the poll answered 400), the round is tried again."""
    for _ in range(10):
        sid = open_polling(node1)
        pending = raw_poll(node1, sid)
        assert polling(node1, sid, "POST", "1") == (200, "ok")
        status, body = read_answer(pending)
        if status == 400:
            continue
        assert (status, body) == (200, "6")
        assert polling(node1, sid)[0] == 400
        return
    pytest.fail("the close overtook the poll ten times")


def upgraded_websocket(node, sid):
    ws = websocket.create_connection(ws_url(node, f"&sid={sid}"), timeout=WAIT)
    ws.send("2probe")
    assert ws.recv() == "3probe"
    ws.send("5")
    return ws


def test_a_second_websocket_for_an_upgraded_session_is_closed(api, node1):
    """engine.io v4 suite: "ignores WebSocket connection with same sid after upgrade"."""
    sid = open_polling(node1)
    assert polling(node1, sid, "POST", "40" + json.dumps({"token": api.register("upgraded").token})) == (200, "ok")
    status, connected = polling(node1, sid)
    assert connected.startswith("40{"), connected
    ws = upgraded_websocket(node1, sid)
    second = websocket.create_connection(ws_url(node1, f"&sid={sid}"), timeout=WAIT)
    assert_closed(second)
    # The session goes on on the first one.
    ws.send('421["room:leave",{"roomId":"r_none"}]')
    assert next_packet(ws).startswith("431["), "the upgraded session no longer answers"
    ws.close()


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_methods_other_than_get_and_post_get_400(node1, method):
    """engine.io v4 suite: "fails with an invalid request method"."""
    assert polling(node1, method=method) == (400, '{"code":2,"message":"Bad handshake method"}')
    sid = open_polling(node1)
    assert polling(node1, sid, method=method) == (400, '{"code":3,"message":"Bad request"}')


def test_a_handshake_is_a_get(node1):
    """engine.io v4 suite: "fails with an invalid request method" (POST without a session)."""
    assert polling(node1, method="POST", body="") == (400, '{"code":2,"message":"Bad handshake method"}')


@pytest.mark.parametrize("packet", ["40/random", "40/random,", '40/random,{"token":"x"}'])
def test_an_unknown_namespace_gets_the_reference_refusal(node1, packet):
    """socket.io v5 suite: "should disallow connection to an unknown namespace"."""
    ws = open_websocket(node1)
    ws.send(packet)
    assert next_packet(ws) == '44/random,{"message":"Invalid namespace"}'
    ws.close()


# ---------------------------------------------------------------------------------------------
# 41 then 40 on one engine (Socket.IO-Client-Swift's disconnect() then connect())


@pytest.mark.parametrize("carrier", ["query", "header"])
def test_connect_again_on_one_engine_with_the_upgrade_token(api, node1, carrier):
    token = api.register("again").token
    if carrier == "query":
        ws = open_websocket(node1, query=f"&token={token}")
    else:
        ws = open_websocket(node1, header=[f"Authorization: Bearer {token}"])
    for _ in range(2):
        ws.send("40")
        answer = next_packet(ws)
        assert answer.startswith("40{") and "sid" in json.loads(answer[2:]), answer
        ws.send('421["room:leave",{"roomId":"r_none"}]')
        assert next_packet(ws).startswith("431[")
        ws.send("41")
    ws.close()


def test_connect_again_is_refused_once_the_upgrade_token_expired(api, node1):
    account = api.register("lapsed")
    expires = int(time.time()) + 2
    short = jwt_sign({"sub": jwt_claims(account.token)["sub"], "iat": int(time.time()), "exp": expires})
    ws = open_websocket(node1, query=f"&token={short}")
    # The first CONNECT names a long-lived token of its own: the socket outlives the short one.
    ws.send("40" + json.dumps({"token": account.token}))
    assert next_packet(ws).startswith("40{")
    ws.send("41")
    while time.time() < expires:  # the token's own clock, not the machine's speed
        time.sleep(expires - time.time())
    ws.send("40")
    answer = next_packet(ws)
    assert answer.startswith("44") and json.loads(answer[2:])["data"]["code"] == "token_expired", answer
    ws.close()
