import CZlib
public import NIOCore
public import NIOHTTP1
import NIOWebSocket

/// Whether upgraded connections offer permessage-deflate (RFC 7692), and from what size a
/// message is worth compressing.
public struct WebSocketCompression: Sendable, Equatable {
    /// Accept a client's permessage-deflate offer.
    public var isEnabled: Bool
    /// Messages smaller than this many bytes go uncompressed (deflate's header, tail and the
    /// CPU it costs are not worth it on a short event).
    public var thresholdBytes: Int

    public init(isEnabled: Bool, thresholdBytes: Int = 1024) {
        self.isEnabled = isEnabled
        self.thresholdBytes = thresholdBytes
    }

    /// No extension is negotiated.
    public static let off = WebSocketCompression(isEnabled: false)
}

/// permessage-deflate as one connection negotiated it.
///
/// Always without context takeover, both ways, so that no zlib stream outlives a message:
/// - `server_no_context_takeover`: each message the server sends is compressed on its own, so
///   the same compressed bytes are valid for every connection with the same window size, and a
///   fan-out compresses an event once per window size (``WebSocketOutboundMessage``), not once
///   per socket;
/// - `client_no_context_takeover` (a server may ask it of any client, RFC 7692 §7.1.1.2): each
///   message from the client is decompressed on its own, by a stream that lives from a
///   message's first frame to its last and is freed then. An idle connection holds no zlib
///   memory; one in the middle of a compressed message holds one inflate stream (about 44 KiB).
struct PerMessageDeflate: Sendable, Equatable {
    /// The window outbound messages are compressed with (9–15); `nil` when the client asked for
    /// 8, which zlib's raw deflate cannot produce: such a connection gets every message
    /// uncompressed (always allowed) and still has its own compressed messages read.
    var serverWindowBits: Int?
    /// Messages below this size are sent uncompressed.
    var thresholdBytes: Int

    /// The `Sec-WebSocket-Extensions` token.
    static let name = "permessage-deflate"

    /// The first acceptable permessage-deflate offer of `request`, with the response header's
    /// value, or `nil` when compression is off or no offer is acceptable. An offer with an unknown
    /// parameter, a parameter twice, or an invalid value is declined (RFC 7692 §7), and the next
    /// one is considered.
    static func negotiate(_ request: HTTPHeaders, compression: WebSocketCompression) -> (response: String, PerMessageDeflate)? {
        guard compression.isEnabled else { return nil }
        for offer in request[canonicalForm: "sec-websocket-extensions"] {
            var parts = offer.split(separator: ";").map { $0.trimmingSpaces }
            guard !parts.isEmpty, parts.removeFirst().lowercased() == name else { continue }
            if let accepted = accept(parameters: parts, compression: compression) { return accepted }
        }
        return nil
    }

    private static func accept(parameters: [Substring], compression: WebSocketCompression) -> (String, PerMessageDeflate)? {
        var seen: Set<String> = []
        var requestedServerBits: Int?
        for parameter in parameters {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pair[0].trimmingSpaces.lowercased()
            var value = pair.count == 2 ? pair[1].trimmingSpaces : nil
            if let quoted = value, quoted.count >= 2, quoted.first == "\"", quoted.last == "\"" {
                value = quoted.dropFirst().dropLast()
            }
            guard seen.insert(key).inserted else { return nil }
            switch key {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { return nil }
            case "server_max_window_bits":
                guard let value, let bits = windowBits(value) else { return nil }
                requestedServerBits = bits
            case "client_max_window_bits":
                // The client may limit its own window; inflating with 15 reads any window.
                if let value, windowBits(value) == nil { return nil }
            default:
                return nil
            }
        }
        var response = "\(name); server_no_context_takeover; client_no_context_takeover"
        if let requestedServerBits { response += "; server_max_window_bits=\(requestedServerBits)" }
        let serverBits = requestedServerBits.map { $0 == 8 ? nil : $0 } ?? 15
        return (response, PerMessageDeflate(serverWindowBits: serverBits, thresholdBytes: compression.thresholdBytes))
    }

    /// 8–15, digits only (RFC 7692 §7.1.2).
    private static func windowBits(_ value: Substring) -> Int? {
        guard !value.isEmpty, value.count <= 2, value.allSatisfy({ $0.isASCII && $0.isNumber }), let bits = Int(value), (8...15).contains(bits) else {
            return nil
        }
        return bits
    }

    // MARK: Compressing

    /// The tail a sync flush ends with, removed on send and put back on receive (RFC 7692 §7.2).
    static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// `payload` compressed as one message on its own (raw deflate, no context kept), its
    /// trailing `00 00 ff ff` removed; `nil` if zlib fails.
    static func compress(_ payload: ByteBuffer, windowBits: Int, allocator: ByteBufferAllocator = .init()) -> ByteBuffer? {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deinitialize(count: 1); stream.deallocate() }
        // memLevel 8 and the default level: zlib's defaults, what browsers and ws use.
        guard deflateInit2_(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -Int32(windowBits), 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return nil
        }
        defer { deflateEnd(stream) }
        let inputLength = payload.readableBytes
        var output = allocator.buffer(capacity: Int(deflateBound(stream, UInt(inputLength))) + 16)
        let ok = payload.withUnsafeReadableBytes { input -> Bool in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.pointee.avail_in = UInt32(inputLength)
            while true {
                if output.writableBytes < 64 { output.reserveCapacity(minimumWritableBytes: max(64, output.capacity / 2)) }
                let (status, written) = output.withUnsafeMutableWritableBytes { room -> (Int32, Int) in
                    stream.pointee.next_out = room.bindMemory(to: Bytef.self).baseAddress
                    stream.pointee.avail_out = UInt32(room.count)
                    let status = deflate(stream, Z_SYNC_FLUSH)
                    return (status, room.count - Int(stream.pointee.avail_out))
                }
                output.moveWriterIndex(forwardBy: written)
                guard status == Z_OK || status == Z_BUF_ERROR else { return false }
                // Done once the input is taken and the flush had room to finish.
                if stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 { return true }
            }
        }
        guard ok, output.readableBytes >= 4,
            output.getBytes(at: output.writerIndex - 4, length: 4) == tail
        else { return nil }
        output.moveWriterIndex(to: output.writerIndex - 4)
        return output
    }
}

/// Decompresses one message from a client that uses no context takeover: made at the message's
/// first frame, dropped (and its zlib memory freed) after its last.
final class PerMessageInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// Bytes the message has decompressed to so far.
    private var produced = 0
    /// The deflate data ended (a final block): anything after it is ignored.
    private var ended = false
    let maxMessageSize: Int

    /// - Parameter maxMessageSize: the largest decompressed message: a bigger one fails with
    ///   1009 as soon as its output passes the limit, before more is allocated.
    init?(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15: the largest window, which reads data compressed with any smaller one.
        guard inflateInit2_(stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decompresses one frame's payload of the message; after the final frame, the tail.
    func inflate(_ data: ByteBuffer, final: Bool, allocator: ByteBufferAllocator) throws(WebSocketCloseReason) -> ByteBuffer {
        var output = allocator.buffer(capacity: min(max(data.readableBytes * 2, 256), maxMessageSize - produced + 1))
        var failure: WebSocketCloseReason?
        data.withUnsafeReadableBytes { input in
            do throws(WebSocketCloseReason) { try feed(input, into: &output) } catch { failure = error }
        }
        if final, failure == nil {
            Self.tailBytes.withUnsafeBytes { input in
                do throws(WebSocketCloseReason) { try feed(input, into: &output) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        return output
    }

    private static let tailBytes = PerMessageDeflate.tail

    private func feed(_ input: UnsafeRawBufferPointer, into output: inout ByteBuffer) throws(WebSocketCloseReason) {
        guard !ended, input.count > 0 else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        stream.pointee.avail_in = UInt32(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            // One byte more than the limit allows: seeing it is how a message too large is told.
            let allowed = maxMessageSize - produced + 1
            if output.writableBytes == 0 {
                output.reserveCapacity(minimumWritableBytes: min(max(output.capacity, 1024), allowed))
            }
            let (status, written, room) = output.withUnsafeMutableWritableBytes { buffer -> (Int32, Int, Int) in
                let room = min(buffer.count, allowed)
                stream.pointee.next_out = buffer.bindMemory(to: Bytef.self).baseAddress
                stream.pointee.avail_out = UInt32(room)
                let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                return (status, room - Int(stream.pointee.avail_out), room)
            }
            output.moveWriterIndex(forwardBy: written)
            produced += written
            guard produced <= maxMessageSize else {
                throw WebSocketCloseReason(.messageTooLarge, "message larger than \(maxMessageSize) bytes once decompressed")
            }
            switch status {
            case Z_STREAM_END:
                ended = true
                return
            case Z_OK, Z_BUF_ERROR:
                if stream.pointee.avail_in == 0, written < room { return }
                if status == Z_BUF_ERROR, written == 0, stream.pointee.avail_in > 0 {
                    throw WebSocketCloseReason(.dataInconsistentWithMessage, "invalid compressed data")
                }
            default:
                throw WebSocketCloseReason(.dataInconsistentWithMessage, "invalid compressed data")
            }
        }
    }
}

@available(*, unavailable)
extension PerMessageInflater: Sendable {}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
