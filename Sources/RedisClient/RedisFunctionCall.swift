/// One call of a library function, encoded once: `FCALL <name> <numkeys> <key…> <argument…>`, or
/// `FCALL_RO` for a function that only reads (registered `no-writes`).
///
/// ``RedisClientProtocol/call(_:timeout:durability:)`` runs it where its keys live; a server that
/// does not have the library (`ERR Function not found`) has it loaded and runs the call again.
public struct RedisFunctionCall: Sendable {
    /// The function's name without its library's version: metrics and logs use it.
    public let function: String
    /// The library the function belongs to, loaded where it is missing.
    public let library: RedisFunctionLibrary
    /// Whether the function only reads (`FCALL_RO`). Every other call changes state.
    public let isReadOnly: Bool
    /// The command sent, its keys declared for slot routing.
    public let command: RedisCommand

    /// Creates a call.
    /// - Parameters:
    ///   - function: the function's name in `library`, without the version.
    ///   - keys: the keys it takes, in its order: all in one cluster slot.
    ///   - arguments: its arguments, in its order.
    ///   - isReadOnly: the function is registered `no-writes`: it is called with `FCALL_RO`.
    public init(_ function: String, in library: RedisFunctionLibrary, keys: [String], arguments: [any RedisArgument], isReadOnly: Bool) {
        self.function = function
        self.library = library
        self.isReadOnly = isReadOnly
        var words: [any RedisArgument] = [library.registeredName(of: function), keys.count]
        words.reserveCapacity(2 + keys.count + arguments.count)
        for key in keys { words.append(key) }
        words.append(contentsOf: arguments)
        self.command = RedisCommand(isReadOnly ? "FCALL_RO" : "FCALL", words, keys: keys)
    }
}
