import Foundation
import NIOCore
import RoomcastServer
import SocketIO

// Feeds arbitrary bytes through everything a client's bytes go through before a handler runs:
// a WebSocket text frame or a polling body to Engine.IO packets, message bodies to Socket.IO
// packets (whose parser runs the JSON scanner over the data), and each event's first argument
// into every socket event's request type, as `SocketEventRouter` decodes it. The input is also
// used as text for the encoders. Where an encoded form exists, it must decode back to the same
// thing; any broken invariant is a `fatalError`, which libFuzzer reports as a crash.

/// libFuzzer's entry point: one input, whatever its bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = ByteBuffer(bytes: UnsafeBufferPointer(start: data, count: size))
    let frame = checkFrame(input)
    checkPollingBody(input, asFrame: frame)
    checkEncoders(text: String(buffer: input))
    return 0
}

// MARK: Engine.IO

/// A WebSocket text frame, decoded as `SocketConnection` does.
private func checkFrame(_ text: ByteBuffer) -> EngineIOPacket? {
    let packet: EngineIOPacket
    do {
        packet = try EngineIOPacket(decoding: text)
    } catch {
        // The server sends `message` back; `offset` must point into the text.
        checkOffset(error.offset, of: error.description, in: text)
        return nil
    }
    let encoded = packet.encoded()
    if case .binary = packet {
        // Base64 has more than one spelling of some bytes (padding bits): the bytes survive.
        require((try? EngineIOPacket(decoding: encoded)) == packet, "a binary packet re-encodes to other bytes", encoded)
    } else {
        // The packet's data is the text after the type byte, so encoding gives the text back.
        require(encoded == text, "Engine.IO packet re-encodes to different bytes", encoded)
    }
    switch packet {
    case .message(let body):
        checkSocketIO(body)
    case .open(let json):
        // What the open packet accepts as an object, CONNECT accepts as its data.
        var connect = ByteBuffer(integer: SocketIOPacketKind.connect.digit)
        connect.writeImmutableBuffer(json)
        let again = try? SocketIOPacket(decoding: connect)
        require(again?.kind == .connect && again?.data != nil, "an open packet's object is no CONNECT data", connect)
    case .close, .ping, .pong, .upgrade, .noop, .binary:
        break
    }
    return packet
}

/// A long-polling body: packets joined by 0x1E.
private func checkPollingBody(_ body: ByteBuffer, asFrame frame: EngineIOPacket?) {
    let records = body.readableBytesView.split(separator: EngineIOPayload.separator, omittingEmptySubsequences: false)
    let packets: [EngineIOPacket]
    do {
        packets = try EngineIOPayload.decode(body)
    } catch {
        require(records.count > 1 || frame == nil, "a one-record body fails but decodes as a frame", body)
        checkOffset(error.offset, of: error.description, in: body)
        return
    }
    require(packets.count == records.count, "polling body decodes to \(packets.count) of \(records.count) records", body)
    if records.count == 1 {
        // Decoded as a frame already: the two forms must agree.
        require(packets == [frame].compactMap { $0 }, "a one-record body and the same frame differ", body)
        return
    }
    let encoded = EngineIOPayload.encode(packets)
    let joined = EngineIOPayload.join(frames: packets.map { $0.encoded() })
    require(joined == encoded, "joined frames differ from the encoded polling body", joined)
    if packets.contains(where: { if case .binary = $0 { true } else { false } }) {
        require((try? EngineIOPayload.decode(encoded)) == packets, "a polling body with binary re-encodes to other packets", encoded)
    } else {
        require(encoded == body, "polling body re-encodes to different bytes", encoded)
    }
    for case .message(let socketIOBody) in packets {
        checkSocketIO(socketIOBody)
    }
}

// MARK: Socket.IO

/// The body of an Engine.IO message, decoded as `SocketConnection.handleSocketIO` does.
private func checkSocketIO(_ body: ByteBuffer) {
    let packet: SocketIOPacket
    do {
        packet = try SocketIOPacket(decoding: body)
    } catch {
        // The server sends `code` and `message` back; `offset` must point into the body.
        checkOffset(error.offset, of: error.description, in: body)
        // A lower depth limit only refuses more.
        require((try? SocketIOPacket(decoding: body, maxDepth: 2)) == nil, "accepted only with a lower maxDepth", body)
        return
    }
    if let shallow = try? SocketIOPacket(decoding: body, maxDepth: 2) {
        require(shallow == packet, "a lower maxDepth decodes differently", body)
    }
    checkCanonicalForm(of: packet)
    checkReencoding(of: packet)
    for argument in packet.arguments {
        checkAlone(argument)
    }

    switch packet.kind {
    case .connect:
        // The gateway's `SocketConnection` reads an optional token from CONNECT's data.
        if let data = packet.data {
            _ = try? JSONDecoder().decode(ConnectAuth.self, from: Data(data.readableBytesView))
        }
    case .event:
        if let name = packet.eventName, let payload = packet.arguments.first {
            decodeRequests(named: name, from: payload)
        }
    case .disconnect, .ack, .connectError:
        break
    }
}

/// Mirrors `SocketConnection`'s private CONNECT auth payload.
private struct ConnectAuth: Decodable {
    var token: String?
}

/// Type digit, namespace unless the default, ack id, then the data as parsed: the same packet.
private func checkCanonicalForm(of packet: SocketIOPacket) {
    var canonical = ByteBuffer()
    if let attachments = packet.attachments {
        canonical.writeInteger(packet.kind.digit + 3)
        canonical.writeString("\(attachments)-")
    } else {
        canonical.writeInteger(packet.kind.digit)
    }
    if packet.namespace != "/" {
        canonical.writeString(packet.namespace)
        canonical.writeInteger(UInt8(ascii: ","))
    }
    if let ackId = packet.ackId {
        canonical.writeString(String(ackId))
    }
    if let data = packet.data {
        canonical.writeImmutableBuffer(data)
    }
    let again = try? SocketIOPacket(decoding: canonical)
    require(again == packet, "the canonical form decodes differently", canonical)
}

/// Events and acks rebuilt with `SocketIOFrame`, which escapes the name its own way.
private func checkReencoding(of packet: SocketIOPacket) {
    let frame: ByteBuffer
    switch packet.kind {
    case .event:
        guard let name = packet.eventName else { fatalError("an EVENT without a name") }
        frame = SocketIOFrame.event(
            name: name,
            arguments: packet.arguments,
            namespace: packet.namespace,
            ackId: packet.ackId,
            attachments: packet.attachments
        )
    case .ack:
        guard let id = packet.ackId else { fatalError("an ACK without an id") }
        frame = SocketIOFrame.ack(id: id, arguments: packet.arguments, namespace: packet.namespace, attachments: packet.attachments)
    case .connect, .disconnect, .connectError:
        return
    }
    guard let again = decodeFrame(frame) else {
        fail("a re-encoded \(packet.kind) does not decode", frame)
    }
    require(
        again.kind == packet.kind && again.namespace == packet.namespace && again.ackId == packet.ackId
            && again.arguments == packet.arguments && sameUTF8(again.eventName, packet.eventName),
        "a re-encoded \(packet.kind) decodes differently",
        frame
    )
}

/// A value the scanner delimited inside an array scans as that value on its own.
private func checkAlone(_ argument: ByteBuffer) {
    let frame = SocketIOFrame.ack(id: 0, arguments: [argument])
    let again = decodeFrame(frame)
    require(again?.arguments == [argument], "an argument does not scan on its own", frame)
}

/// A complete frame as the server sends it: `4` + Socket.IO packet.
private func decodeFrame(_ frame: ByteBuffer) -> SocketIOPacket? {
    guard case .message(let body) = try? EngineIOPacket(decoding: frame) else { return nil }
    return try? SocketIOPacket(decoding: body)
}

// MARK: Event payloads

private let eventNames = SocketEventRouter.eventNames

/// The payload decoded as every event's request; an unknown name is refused as such first.
private func decodeRequests(named name: String, from payload: ByteBuffer) {
    if !eventNames.contains(name) {
        decodeRequest(of: name, from: payload, known: false)
    }
    for event in eventNames {
        decodeRequest(of: event, from: payload, known: true)
    }
}

/// Decoding may refuse the payload, but only as a client error.
private func decodeRequest(of name: String, from payload: ByteBuffer, known: Bool) {
    do {
        try SocketEventRouter.decodeRequest(of: name, from: payload)
        require(known, "an unknown event '\(name)' decoded", payload)
    } catch {
        let expected = known ? "invalid_payload" : "unknown_event"
        require(error.code.rawValue == expected, "'\(name)' failed with \(error), not \(expected)", payload)
    }
}

// MARK: Encoders

private let reservedEventNames: Set<String> = [
    "connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener",
]

/// Text the server puts in JSON strings (ids, event names, error messages) stays decodable.
private func checkEncoders(text: String) {
    let handshake = EngineIOHandshake(sid: text, upgrades: [text, "websocket"])
    let open = handshake.packet.encoded()
    guard case .open = try? EngineIOPacket(decoding: open) else { fail("the handshake does not decode", open) }

    let event = SocketIOFrame.event(name: text, arguments: [])
    if let packet = decodeFrame(event) {
        require(sameUTF8(packet.eventName, text), "an event name does not round-trip", event)
    } else {
        require(reservedEventNames.contains(text), "an event named by the server does not decode", event)
    }

    let connect = SocketIOFrame.connect(sid: text)
    require(decodeFrame(connect)?.kind == .connect, "a CONNECT does not decode", connect)
    let refusal = SocketIOFrame.connectError(message: text, code: text)
    require(decodeFrame(refusal)?.kind == .connectError, "a CONNECT_ERROR does not decode", refusal)

    // Escaped JSON never holds the record separator, so frames join safely into a polling body.
    let body = EngineIOPayload.join(frames: [event, connect, refusal])
    let packets = try? EngineIOPayload.decode(body)
    require(
        packets?.map { $0.encoded() } == [event, connect, refusal],
        "server frames do not survive a polling body",
        body
    )
}

// MARK: Helpers

/// An error's offset, when it has one, is a position in the decoded bytes (the end included).
private func checkOffset(_ offset: Int?, of error: String, in bytes: ByteBuffer) {
    guard let offset else { return }
    require((0...bytes.readableBytes).contains(offset), "\(error) reports offset \(offset)", bytes)
}

/// Strings compared byte for byte, not by canonical equivalence.
private func sameUTF8(_ lhs: String?, _ rhs: String?) -> Bool {
    lhs.map { Array($0.utf8) } == rhs.map { Array($0.utf8) }
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String, _ bytes: ByteBuffer) {
    if !condition { fail(message(), bytes) }
}

private func fail(_ message: String, _ bytes: ByteBuffer) -> Never {
    fatalError("\(message): \(String(decoding: bytes.readableBytesView, as: UTF8.self).debugDescription)")
}
