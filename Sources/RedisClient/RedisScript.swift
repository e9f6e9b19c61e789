import Crypto
import NIOCore

/// A Lua script known by its SHA1, run with `EVALSHA`.
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
}

extension RedisClient {
    /// Loads scripts into Redis's script cache (`SCRIPT LOAD`), failing early on a Lua syntax error.
    ///
    /// In cluster mode every master loads them.
    public func load(_ scripts: [RedisScript]) async throws(RedisError) {
        for script in scripts {
            let command = RedisCommand("SCRIPT", ["LOAD", script.source])
            let replies: [RedisReply]
            if let router {
                replies = try await router.broadcast(command, deadline: .now() + TimeAmount(configuration.commandTimeout))
            } else {
                replies = [try await send(command)]
            }
            for reply in replies {
                try Self.check(String(redisReply: reply), of: script)
            }
        }
    }

    private static func check(_ sha: String, of script: RedisScript) throws(RedisError) {
        guard sha == script.sha1 else {
            throw RedisError(.unexpectedReply, "Redis hashed script \(script.name) as \(sha), expected \(script.sha1)")
        }
    }

    /// Runs a script with `EVALSHA`; when Redis has lost it (`NOSCRIPT` after a restart or
    /// `SCRIPT FLUSH`), loads it again and retries once.
    public func evaluate(
        _ script: RedisScript,
        keys: [String] = [],
        arguments: [any RedisArgument] = [],
        timeout: Duration? = nil
    ) async throws(RedisError) -> RedisReply {
        let command = RedisCommand("EVALSHA", [script.sha1, keys.count] + keys + arguments, keys: keys)
        // Measured as one command named after the script, a reload included: a NOSCRIPT
        // answered by loading it again is not a failure the caller sees.
        let measured = instruments(for: script)
        let start = NIODeadline.now()
        do throws(RedisError) {
            let reply: RedisReply
            do throws(RedisError) {
                reply = try await send(command, timeout: timeout, measuredAs: nil)
            } catch where error.replyPrefix == "NOSCRIPT" {
                // Routed by the script's keys: in a cluster, the master that lacked it loads it.
                try Self.check(try await send(RedisCommand("SCRIPT", ["LOAD", script.source], keys: keys), as: String.self), of: script)
                reply = try await send(command, timeout: timeout, measuredAs: nil)
            }
            measured.succeeded(since: start)
            return reply
        } catch {
            measured.failed(since: start)
            throw error
        }
    }
}
