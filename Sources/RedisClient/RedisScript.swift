import Crypto
import NIOCore

/// A Lua script known by its SHA1, run with `EVALSHA`
/// (``RedisClientProtocol/evaluate(_:keys:arguments:timeout:)``).
public struct RedisScript: Sendable, Hashable {
    /// A short name for logs and errors.
    public let name: String
    /// The Lua source.
    public let source: String
    /// The lowercase hex SHA1 of `source`, as `SCRIPT LOAD` reports it.
    public let sha1: String

    /// Creates a script; the SHA1 is computed here, once.
    public init(name: String, source: String) {
        self.name = name
        self.source = source
        self.sha1 = Insecure.SHA1.hash(data: Array(source.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// `SCRIPT LOAD`, routed in a cluster like a command on `keys`.
    func loadCommand(keys: [String] = []) -> RedisCommand {
        RedisCommand("SCRIPT", ["LOAD", source], keys: keys)
    }

    /// Checks `SCRIPT LOAD`'s answer: the SHA1 Redis computed must be ours.
    func checkLoaded(_ reply: RedisReply) throws(RedisError) {
        let sha = try String(redisReply: reply)
        guard sha == sha1 else {
            throw RedisError(.unexpectedReply, "Redis hashed script \(name) as \(sha), expected \(sha1)")
        }
    }
}
