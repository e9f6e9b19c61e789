"""Our port of the official Engine.IO v4 protocol suite (socketio/socket.io,
docs/engine.io-protocol/v4-test-suite/test-suite.js): its 25 cases, one test each, named after
the case's title, with the suite's requests and expected bytes, against the Engine.IO echo server
at /engine.io/ (CONFORMANCE_URL). The case bodies are in engineio_cases.py; the timing choices
(waits on conditions, retries when a busy machine overran the ping interval) are explained there
and in conformance_client.py.
"""

import engineio_cases as cases

PATH = "engine.io"


# Engine.IO protocol › handshake › HTTP long-polling

def test_engineio_handshake_http_long_polling_successfully_opens_a_session():
    """Engine.IO protocol › handshake › HTTP long-polling › successfully opens a session"""
    cases.handshake_polling_opens_a_session(PATH)


def test_engineio_handshake_http_long_polling_fails_with_an_invalid_eio_query_parameter():
    """Engine.IO protocol › handshake › HTTP long-polling › fails with an invalid 'EIO' query parameter"""
    cases.handshake_polling_invalid_eio(PATH)


def test_engineio_handshake_http_long_polling_fails_with_an_invalid_transport_query_parameter():
    """Engine.IO protocol › handshake › HTTP long-polling › fails with an invalid 'transport' query parameter"""
    cases.handshake_polling_invalid_transport(PATH)


def test_engineio_handshake_http_long_polling_fails_with_an_invalid_request_method():
    """Engine.IO protocol › handshake › HTTP long-polling › fails with an invalid request method"""
    cases.handshake_polling_invalid_method(PATH)


# Engine.IO protocol › handshake › WebSocket

def test_engineio_handshake_websocket_successfully_opens_a_session():
    """Engine.IO protocol › handshake › WebSocket › successfully opens a session"""
    cases.handshake_websocket_opens_a_session(PATH)


def test_engineio_handshake_websocket_fails_with_an_invalid_eio_query_parameter():
    """Engine.IO protocol › handshake › WebSocket › fails with an invalid 'EIO' query parameter"""
    cases.handshake_websocket_invalid_eio(PATH)


def test_engineio_handshake_websocket_fails_with_an_invalid_transport_query_parameter():
    """Engine.IO protocol › handshake › WebSocket › fails with an invalid 'transport' query parameter"""
    cases.handshake_websocket_invalid_transport(PATH)


# Engine.IO protocol › message › HTTP long-polling

def test_engineio_message_http_long_polling_sends_and_receives_a_payload_containing_one_plain_text_packet():
    """Engine.IO protocol › message › HTTP long-polling › sends and receives a payload containing one plain text packet"""
    cases.polling_one_plain_text_packet()


def test_engineio_message_http_long_polling_sends_and_receives_a_payload_containing_several_plain_text_packets():
    """Engine.IO protocol › message › HTTP long-polling › sends and receives a payload containing several plain text packets"""
    cases.polling_several_plain_text_packets()


def test_engineio_message_http_long_polling_sends_and_receives_a_payload_containing_plain_text_and_binary_packets():
    """Engine.IO protocol › message › HTTP long-polling › sends and receives a payload containing plain text and binary packets"""
    cases.polling_plain_text_and_binary_packets()


def test_engineio_message_http_long_polling_closes_the_session_upon_invalid_packet_format():
    """Engine.IO protocol › message › HTTP long-polling › closes the session upon invalid packet format"""
    cases.polling_invalid_packet_format()


def test_engineio_message_http_long_polling_closes_the_session_upon_duplicate_poll_requests():
    """Engine.IO protocol › message › HTTP long-polling › closes the session upon duplicate poll requests"""
    cases.polling_duplicate_poll_requests()


def test_engineio_message_http_long_polling_closes_the_session_upon_cancelled_polling_request():
    """Engine.IO protocol › message › HTTP long-polling › closes the session upon cancelled polling request"""
    cases.polling_cancelled_polling_request()


# Engine.IO protocol › message › WebSocket

def test_engineio_message_websocket_sends_and_receives_a_plain_text_packet():
    """Engine.IO protocol › message › WebSocket › sends and receives a plain text packet"""
    cases.websocket_plain_text_packet()


def test_engineio_message_websocket_sends_and_receives_a_binary_packet():
    """Engine.IO protocol › message › WebSocket › sends and receives a binary packet"""
    cases.websocket_binary_packet()


def test_engineio_message_websocket_closes_the_session_upon_invalid_packet_format():
    """Engine.IO protocol › message › WebSocket › closes the session upon invalid packet format"""
    cases.websocket_invalid_packet_format()


# Engine.IO protocol › heartbeat

def test_engineio_heartbeat_http_long_polling_sends_ping_pong_packets():
    """Engine.IO protocol › heartbeat › HTTP long-polling › sends ping/pong packets"""
    cases.heartbeat_polling_ping_pong(PATH)


def test_engineio_heartbeat_http_long_polling_closes_the_session_upon_ping_timeout():
    """Engine.IO protocol › heartbeat › HTTP long-polling › closes the session upon ping timeout"""
    cases.heartbeat_polling_ping_timeout(PATH)


def test_engineio_heartbeat_websocket_sends_ping_pong_packets():
    """Engine.IO protocol › heartbeat › WebSocket › sends ping/pong packets"""
    cases.heartbeat_websocket_ping_pong(PATH)


def test_engineio_heartbeat_websocket_closes_the_session_upon_ping_timeout():
    """Engine.IO protocol › heartbeat › WebSocket › closes the session upon ping timeout"""
    cases.heartbeat_websocket_ping_timeout(PATH)


# Engine.IO protocol › close

def test_engineio_close_http_long_polling_forcefully_closes_the_session():
    """Engine.IO protocol › close › HTTP long-polling › forcefully closes the session"""
    cases.close_polling_forcefully(PATH)


def test_engineio_close_websocket_forcefully_closes_the_session():
    """Engine.IO protocol › close › WebSocket › forcefully closes the session"""
    cases.close_websocket_forcefully(PATH)


# Engine.IO protocol › upgrade

def test_engineio_upgrade_successfully_upgrades_from_http_long_polling_to_websocket():
    """Engine.IO protocol › upgrade › successfully upgrades from HTTP long-polling to WebSocket"""
    cases.upgrade_successfully(PATH, echo=True)


def test_engineio_upgrade_ignores_http_requests_with_same_sid_after_upgrade():
    """Engine.IO protocol › upgrade › ignores HTTP requests with same sid after upgrade"""
    cases.upgrade_ignores_http_requests(PATH, echo=True)


def test_engineio_upgrade_ignores_websocket_connection_with_same_sid_after_upgrade():
    """Engine.IO protocol › upgrade › ignores WebSocket connection with same sid after upgrade"""
    cases.upgrade_ignores_websocket_connection(PATH, echo=True)
