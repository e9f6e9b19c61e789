public import NIOCore

/// HTTP long-polling bodies: Engine.IO packets joined by the 0x1E record separator.
public enum EngineIOPayload: Sendable {
    /// The record separator between packets in a polling payload.
    public static let separator: UInt8 = 0x1E

    /// Splits a polling body into packets; an empty body or empty record is an error.
    public static func decode(_ payload: ByteBuffer, maxDepth: Int = 64) throws(EngineIOError) -> [EngineIOPacket] {
        let ranges = payload.withUnsafeReadableBytes { bytes in
            var ranges: [Range<Int>] = []
            var start = 0
            for index in 0..<bytes.count where bytes[index] == Self.separator {
                ranges.append(start..<index)
                start = index + 1
            }
            ranges.append(start..<bytes.count)
            return ranges
        }

        var packets: [EngineIOPacket] = []
        packets.reserveCapacity(ranges.count)
        for range in ranges {
            guard let record = payload.getSlice(at: payload.readerIndex + range.lowerBound, length: range.count)
            else { throw EngineIOError.emptyPacket.at(range.lowerBound) }
            packets.append(try EngineIOPacket(decoding: record, baseOffset: range.lowerBound, maxDepth: maxDepth))
        }
        return packets
    }

    /// Joins packets into one polling body.
    ///
    /// Packet data must not contain 0x1E; frames built by `SocketIOFrame` never do, since
    /// JSON escapes every control character.
    public static func encode(_ packets: [EngineIOPacket]) -> ByteBuffer {
        let capacity = packets.reduce(0) { $0 + 2 + $1.dataLength }
        var buffer = ByteBufferAllocator().buffer(capacity: capacity)
        for (index, packet) in packets.enumerated() {
            if index > 0 { buffer.writeInteger(Self.separator) }
            packet.encode(into: &buffer)
        }
        return buffer
    }

    /// Joins already-encoded packet texts (such as `SocketIOFrame` output) into one polling body.
    public static func join(frames: [ByteBuffer]) -> ByteBuffer {
        let capacity = frames.reduce(0) { $0 + 1 + $1.readableBytes }
        var buffer = ByteBufferAllocator().buffer(capacity: capacity)
        for (index, frame) in frames.enumerated() {
            if index > 0 { buffer.writeInteger(Self.separator) }
            buffer.writeImmutableBuffer(frame)
        }
        return buffer
    }
}
