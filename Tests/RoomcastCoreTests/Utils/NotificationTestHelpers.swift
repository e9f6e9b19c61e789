import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Helpers shared by the notification, push token and push outbox tests.
enum NotificationFixture {
    /// A plain draft numbered `index`.
    static func draft(_ index: Int = 0, id: NotificationID? = nil) -> NotificationDraft {
        NotificationDraft(id: id, type: "test.kind", title: "Title \(index)", body: "Body \(index)")
    }

    /// A device token: `length` hex digits derived from `seed`.
    static func token(_ seed: Int, length: Int = 64) -> String {
        let unit = String(seed, radix: 16)
        var text = ""
        while text.count < length { text += "a" + unit + "0f" }
        return String(text.prefix(length))
    }

    /// Publishes a marker on `channel` and waits for it: every message published on `channel`
    /// before (by the work awaited so far) has then arrived. Returns those, parsed.
    static func settle(_ inbox: MessageInbox, _ redis: any RedisClientProtocol, on channel: String) async throws -> [Publication] {
        let marker = "settled-\(UUID().uuidString)"
        try await TestNode.publish(#"- 42["test:marker",{"marker":"\#(marker)"}]"#, on: channel, in: redis)
        let messages = try await inbox.wait { $0.contains { String(buffer: $0.payload).contains(marker) } }
        return try messages.filter { $0.channel == channel && !String(buffer: $0.payload).contains("test:marker") }
            .map(Publication.init)
    }

    /// The entries of a stream, oldest first.
    static func stream(_ redis: any RedisClientProtocol, _ key: String) async throws -> [StreamEntry] {
        try StreamEntry.entries(try await redis.send("XRANGE", key, "-", "+"))
    }

    /// The members of a sorted set with their scores, lowest first.
    static func scored(_ redis: any RedisClientProtocol, _ key: String) async throws -> [(member: String, score: String)] {
        let flat = try await redis.send(RedisCommand("ZRANGE", key, 0, -1, "WITHSCORES"), as: [String].self)
        return stride(from: 0, to: flat.count - 1, by: 2).map { (flat[$0], flat[$0 + 1]) }
    }

    static func setMembers(_ redis: any RedisClientProtocol, _ key: String) async throws -> Set<String> {
        Set(try await redis.send(RedisCommand("SMEMBERS", key), as: [String].self))
    }

    static func hashKeys(_ redis: any RedisClientProtocol, _ key: String) async throws -> Set<String> {
        Set(try await redis.send(RedisCommand("HKEYS", key), as: [String].self))
    }

    static func exists(_ redis: any RedisClientProtocol, _ key: String) async throws -> Bool {
        try await redis.send(RedisCommand("EXISTS", key), as: Int.self) == 1
    }

    /// The JSON of a value as Roomcast encodes it.
    static func json(_ value: some Encodable) throws -> JSONValue {
        try LiveFixture.json(value)
    }

    /// An ISO 8601 UTC timestamp with milliseconds.
    static func isISOTimestamp(_ value: JSONValue) -> Bool {
        value.stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil
    }

    /// The consumers of the push workers group and how many jobs each holds.
    static func consumers(_ redis: any RedisClientProtocol) async throws -> [String: Int] {
        let reply = try await redis.send("XINFO", "CONSUMERS", RedisKeys.pushOutbox, RedisKeys.pushWorkersGroup)
        guard case .array(let consumers) = reply else { throw FrameError("not an XINFO CONSUMERS reply: \(reply)") }
        var result: [String: Int] = [:]
        for consumer in consumers {
            guard case .array(let pairs) = consumer else { throw FrameError("not a consumer: \(consumer)") }
            var name: String?
            var pending: Int?
            for index in stride(from: 0, to: pairs.count - 1, by: 2) {
                switch pairs[index].string {
                case "name": name = pairs[index + 1].string
                case "pending": if case .integer(let count) = pairs[index + 1] { pending = Int(count) }
                default: break
                }
            }
            guard let name, let pending else { throw FrameError("consumer without name or pending: \(consumer)") }
            result[name] = pending
        }
        return result
    }

    /// The pending entries of the push workers group: id → (consumer, deliveries).
    static func pending(_ redis: any RedisClientProtocol) async throws -> [String: (consumer: String, deliveries: Int)] {
        let reply = try await redis.send("XPENDING", RedisKeys.pushOutbox, RedisKeys.pushWorkersGroup, "-", "+", 1000)
        guard case .array(let entries) = reply else { throw FrameError("not an XPENDING reply: \(reply)") }
        var result: [String: (consumer: String, deliveries: Int)] = [:]
        for entry in entries {
            guard case .array(let parts) = entry, parts.count == 4, let id = parts[0].string, let consumer = parts[1].string,
                case .integer(let deliveries) = parts[3]
            else { throw FrameError("not a pending entry: \(entry)") }
            result[id] = (consumer, Int(deliveries))
        }
        return result
    }

    /// Appends `count` jobs to the outbox by hand, as `notification_create` does; returns their ids.
    static func enqueue(_ redis: any RedisClientProtocol, _ count: Int, user: UserID, token: String, prefix: String = "n") async throws -> [String] {
        var ids: [String] = []
        for index in 0..<count {
            let reply = try await redis.send(
                "XADD", RedisKeys.pushOutbox, "*", "user", user.rawValue, "token", token, "notification", "\(prefix)\(index)",
                "payload", #"{"aps":{"badge":\#(index + 1)}}"#
            )
            ids.append(try #require(reply.string))
        }
        return ids
    }
}
