/// Locates the parts of a Socket.IO packet body and validates them like socket.io-parser.
///
/// Works on raw bytes and reports ranges, so `SocketIOPacket` can hand out slices of the
/// original buffer instead of copies.
enum SocketIOPacketParser {
    struct Layout {
        var kind: SocketIOPacketKind
        var namespace: String
        var ackId: Int?
        var data: Range<Int>?
        var eventName: String?
        var arguments: [Range<Int>]
        /// Binary frames that follow (BINARY_EVENT, BINARY_ACK); nil for a plain packet.
        var attachments: Int?
    }

    /// The most attachments a binary packet may announce: more is not a packet any client sends.
    static let maxAttachmentDigits = 6

    /// Socket.IO clients are JavaScript-first; larger ids would not survive a round trip as a JS number.
    static let maxAckId = 9_007_199_254_740_991
    static let maxAckIdDigits = 16

    /// socket.io-parser's RESERVED_EVENTS.
    static let reservedEventNames: Set<String> = [
        "connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener",
    ]

    static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(SocketIOError) -> Layout {
        guard let typeByte = bytes.first else { throw SocketIOError.emptyPacket("no packet type") }
        let kind: SocketIOPacketKind
        switch typeByte {
        case UInt8(ascii: "0"): kind = .connect
        case UInt8(ascii: "1"): kind = .disconnect
        case UInt8(ascii: "2"): kind = .event
        case UInt8(ascii: "3"): kind = .ack
        case UInt8(ascii: "4"): kind = .connectError
        case UInt8(ascii: "5"): kind = .event
        case UInt8(ascii: "6"): kind = .ack
        default: throw SocketIOError.unknownPacketType("first byte is 0x\(String(typeByte, radix: 16))", offset: 0)
        }

        var index = 1
        var attachments: Int?
        if typeByte == UInt8(ascii: "5") || typeByte == UInt8(ascii: "6") {
            attachments = try self.parseAttachments(bytes, index: &index)
        }
        let namespace = try self.parseNamespace(bytes, index: &index)
        let ackOffset = index
        let ackId = try self.parseAckId(bytes, index: &index)

        var json: JSONScanResult?
        let dataOffset = index
        if index < bytes.count {
            do {
                json = try JSONScanner.scan(
                    bytes,
                    startingAt: index,
                    maxDepth: maxDepth,
                    collectElements: kind == .event || kind == .ack
                )
            } catch {
                throw SocketIOError(json: error)
            }
        }
        var layout = Layout(
            kind: kind,
            namespace: namespace,
            ackId: ackId,
            data: json?.range,
            eventName: nil,
            arguments: json?.elements ?? [],
            attachments: attachments
        )
        try self.validate(&layout, json: json?.kind, bytes: bytes, ackOffset: ackOffset, dataOffset: dataOffset)
        return layout
    }

    /// Mirrors socket.io-parser's `isPayloadValid`, except that event names must be strings
    /// and ack ids are only accepted where they mean something.
    private static func validate(
        _ layout: inout Layout,
        json: JSONValueKind?,
        bytes: UnsafeRawBufferPointer,
        ackOffset: Int,
        dataOffset: Int
    ) throws(SocketIOError) {
        switch layout.kind {
        case .connect, .disconnect, .connectError:
            guard layout.ackId == nil else {
                throw SocketIOError.invalidAckId("only EVENT and ACK packets carry an ack id", offset: ackOffset)
            }
        case .event, .ack:
            break
        }

        switch layout.kind {
        case .connect:
            guard json == nil || json == .object else {
                throw SocketIOError.invalidPayload("CONNECT data must be a JSON object", offset: dataOffset)
            }
        case .disconnect:
            guard json == nil else {
                throw SocketIOError.invalidPayload("DISCONNECT carries no data", offset: dataOffset)
            }
        case .connectError:
            guard json == .object || json == .string else {
                throw SocketIOError.invalidPayload(
                    "CONNECT_ERROR data must be a JSON object or string",
                    offset: dataOffset
                )
            }
        case .event:
            guard json == .array else {
                throw SocketIOError.invalidPayload("EVENT data must be a JSON array", offset: dataOffset)
            }
            guard let first = layout.arguments.first else {
                throw SocketIOError.invalidPayload("EVENT array must start with the event name", offset: dataOffset)
            }
            guard first.lowerBound < bytes.count, bytes[first.lowerBound] == UInt8(ascii: "\""),
                let name = JSONStringDecoder.decode(UnsafeRawBufferPointer(rebasing: bytes[first]))
            else {
                throw SocketIOError.invalidPayload("event name must be a JSON string", offset: first.lowerBound)
            }
            guard !self.reservedEventNames.contains(name) else {
                throw SocketIOError.reservedEventName(name, offset: first.lowerBound)
            }
            layout.eventName = name
            layout.arguments.removeFirst()
        case .ack:
            guard layout.ackId != nil else {
                throw SocketIOError.invalidAckId("ACK packets require an ack id", offset: ackOffset)
            }
            guard json == .array else {
                throw SocketIOError.invalidPayload("ACK data must be a JSON array", offset: dataOffset)
            }
        }
    }

    /// `<count>-` after a binary packet's type, as socket.io-parser writes it.
    private static func parseAttachments(_ bytes: UnsafeRawBufferPointer, index: inout Int) throws(SocketIOError) -> Int {
        let start = index
        var count = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            guard index - start < self.maxAttachmentDigits else {
                throw SocketIOError.invalidAttachments("more than \(self.maxAttachmentDigits) digits", offset: start)
            }
            count = count * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
            index += 1
        }
        guard index > start, index < bytes.count, bytes[index] == UInt8(ascii: "-") else {
            throw SocketIOError.invalidAttachments("a binary packet starts with its attachment count and '-'", offset: index)
        }
        index += 1
        return count
    }

    /// A namespace starts with `/` and runs to the first `,`; like the reference parser, the
    /// end of the packet also terminates it (`1/admin`).
    private static func parseNamespace(_ bytes: UnsafeRawBufferPointer, index: inout Int) throws(SocketIOError)
        -> String
    {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "/") else { return "/" }
        let start = index
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
        let name = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        guard UTF8Validation.isValid(name) else {
            throw SocketIOError.invalidNamespace("namespace is not valid UTF-8", offset: start)
        }
        index = end < bytes.count ? end + 1 : end
        return String(decoding: name, as: UTF8.self)
    }

    private static func parseAckId(_ bytes: UnsafeRawBufferPointer, index: inout Int) throws(SocketIOError) -> Int? {
        let start = index
        var value = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            guard index - start < self.maxAckIdDigits else {
                throw SocketIOError.invalidAckId("more than \(self.maxAckIdDigits) digits", offset: start)
            }
            // Overflow-checked even though the digit cap already rules it out: a trap here
            // would let one packet take the server down.
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int(bytes[index] &- UInt8(ascii: "0")))
            guard !overflowA, !overflowB else {
                throw SocketIOError.invalidAckId("exceeds \(self.maxAckId)", offset: start)
            }
            value = sum
            index += 1
        }
        guard index > start else { return nil }
        guard value <= self.maxAckId else {
            throw SocketIOError.invalidAckId("exceeds \(self.maxAckId)", offset: start)
        }
        return value
    }
}
