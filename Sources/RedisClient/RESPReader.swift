private import CHiredis
import NIOCore

/// Incremental RESP parser: bytes in, replies out. hiredis does the parsing.
///
/// Not `Sendable`: it lives inside one channel handler, on that channel's event loop.
final class RESPReader {
    private let reader: UnsafeMutablePointer<redisReader>
    private let allocator: ByteBufferAllocator

    init(allocator: ByteBufferAllocator) {
        guard let reader = redisReaderCreate() else {
            fatalError("hiredis could not allocate a reader (out of memory)")
        }
        self.reader = reader
        self.allocator = allocator
    }

    deinit {
        redisReaderFree(reader)
    }

    /// Hands bytes to hiredis, which keeps them until they form whole replies.
    func feed(_ buffer: ByteBuffer) throws(RedisError) {
        let status = buffer.withUnsafeReadableBytes { bytes in
            redisReaderFeed(reader, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        if status != REDIS_OK {
            throw RedisError(.protocolError, lastError)
        }
    }

    /// The next complete reply, or `nil` when more bytes are needed.
    func next() throws(RedisError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
            throw RedisError(.protocolError, lastError)
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    private var lastError: String {
        withUnsafeBytes(of: reader.pointee.errstr) { bytes in
            let text = bytes.prefix { $0 != 0 }
            return text.isEmpty ? "invalid RESP from server" : String(decoding: text, as: UTF8.self)
        }
    }

    private func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_STRING:
            return .bulk(allocator.buffer(bytes: Self.bytes(node)))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: Self.bytes(node), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: Self.bytes(node), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(node.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(node.elements))
            for index in 0..<Int(node.elements) {
                guard let child = node.element[index] else { continue }
                elements.append(convert(child))
            }
            return .array(elements)
        default:
            return .null
        }
    }

    private static func bytes(_ node: redisReply) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: node.str, count: Int(node.len))
    }
}
