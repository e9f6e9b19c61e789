public import NIOCore

/// One Redis command, encoded to RESP once when it is built.
///
/// Encoding up front keeps the connection's write path to a buffer copy, and lets a caller build
/// a command on its own task rather than on the event loop.
public struct RedisCommand: Sendable {
    /// The command name, for logs and errors (`GET`, `EVALSHA` ...).
    public let name: String
    /// The keys the command touches, for cluster slot routing.
    public let keys: [String]
    /// The RESP bytes: `*<n>\r\n` followed by one bulk string per word.
    public let encoded: ByteBuffer

    /// Creates a command from its name and arguments.
    /// - Parameters:
    ///   - name: the command word, sent as given.
    ///   - arguments: the remaining words.
    ///   - keys: the keys among the arguments, when routing by slot matters.
    public init(_ name: String, _ arguments: [any RedisArgument], keys: [String] = []) {
        var buffer = ByteBufferAllocator().buffer(capacity: 16 + name.utf8.count + arguments.count * 24)
        buffer.writeRESPLength(UInt8(ascii: "*"), arguments.count + 1)
        name.writeRESPBulk(into: &buffer)
        for argument in arguments {
            argument.writeRESPBulk(into: &buffer)
        }
        self.name = name
        self.keys = keys
        self.encoded = buffer
    }

    /// Creates a command from its name and arguments.
    public init(_ name: String, _ arguments: any RedisArgument...) {
        self.init(name, arguments)
    }
}

extension RedisCommand: CustomStringConvertible {
    public var description: String { name }
}
