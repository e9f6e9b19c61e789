import Foundation
import Logging
public import RedisClient

extension RoomcastError {
    /// Maps a Redis failure to what a client should see.
    ///
    /// Functions report domain refusals as error replies whose first word is a code (`FORBIDDEN`,
    /// `NOT_FOUND`, `CONFLICT`, `INVALID`); connection failures, timeouts and the replies of a
    /// Redis that is starting or failing over (`LOADING`, `CLUSTERDOWN`, `TRYAGAIN`, `MASTERDOWN`)
    /// mean Redis is unavailable for now, and so do a full one (`OOM`), a redirection the cluster
    /// client gave up following (`MOVED`, `ASK`: the cluster is resharding) and a function stopped
    /// before its first write because a slot is migrating; anything else is internal.
    public init(_ error: RedisError) {
        switch error.replyPrefix {
        case "FORBIDDEN"?: self.init(.forbidden, Self.text(error))
        case "NOT_FOUND"?: self.init(.notFound, Self.text(error))
        case "CONFLICT"?: self.init(.conflict, Self.text(error))
        case "INVALID"?: self.init(.invalidPayload, Self.text(error))
        case "LIMIT"?: self.init(.limitExceeded, Self.text(error))
        case "LOADING"?, "CLUSTERDOWN"?, "TRYAGAIN"?, "MASTERDOWN"?, "MOVED"?, "ASK"?: self.init(.unavailable, "storage is unavailable, retry later")
        case "ERR"? where error.message.contains(Self.slotMigrating): self.init(.unavailable, "storage is being resharded, retry later")
        // `maxmemory` reached under `noeviction` (config/redis.conf): writes are refused, reads go on.
        case "OOM"?: self.init(.unavailable, "storage is full, retry later")
        case .some: self = Self.unplanned(error)
        case nil:
            if error.code == .timeout || error.code == .connectionClosed || error.code == .connectionFailed || error.code == .clientShutdown {
                self.init(.unavailable, "storage is unavailable, retry later")
            } else if error.code == .notReplicated {
                // Applied on the master, not confirmed by a replica: it may not survive a
                // failover, so it is not reported done. A retry with the same requestId is
                // answered from the record if it survived, and applies it if it did not.
                self.init(.unavailable, "storage could not confirm the change on a replica, retry with the same requestId")
            } else {
                self = Self.unplanned(error)
            }
        }
    }

    /// A failure nobody planned for: the client learns nothing of it, the log everything (the
    /// Redis error itself is the only trace of what happened).
    private static func unplanned(_ error: RedisError) -> RoomcastError {
        redisLogger.warning("a Redis failure answered as internal", metadata: ["error": "\(error)"])
        return RoomcastError(.internalError, "the server could not complete the request")
    }

    private static let redisLogger = Logger(label: "roomcast.redis-errors")

    /// What Redis says when a function touches an undeclared key of a migrating slot that is not
    /// here. The functions declare their keys so that this comes before any write (`_elements.lua`).
    static let slotMigrating = "Script attempted to access a non local key"

    /// The message after the code word, without the ` script: <name>, on @user_function:N.` that
    /// Redis appends to errors raised inside a function.
    private static func text(_ error: RedisError) -> String {
        var text = Substring(error.message.drop { $0 != " " }.dropFirst())
        if let suffix = text.range(of: " script: ") {
            text = text[..<suffix.lowerBound]
        }
        return String(text)
    }
}

/// Runs a Redis operation, mapping its failure to a ``RoomcastError``.
func mappingRedisErrors<Value>(_ operation: () async throws(RedisError) -> Value) async throws(RoomcastError) -> Value {
    do {
        return try await operation()
    } catch {
        throw RoomcastError(error)
    }
}
