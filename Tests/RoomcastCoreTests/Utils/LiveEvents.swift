import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// A published event, either envelope form, read the way a node reads it: per recipient.
struct Publication: CustomStringConvertible {
    var channel: String
    var raw: String
    var envelope: EventEnvelope

    init(_ message: RedisPubSubMessage) throws {
        channel = message.channel
        raw = String(buffer: message.payload)
        envelope = try #require(EventEnvelope(payload: message.payload), "not an envelope: \(raw)")
    }

    var offset: String? { envelope.offset.map(String.init) }
    /// Whether the event differs per recipient (the `@users` form).
    var isPerRecipient: Bool { envelope.listedFrame != nil }

    /// The event name and payload as `user` receives them.
    func event(for user: UserID) throws -> (name: String, payload: JSONValue) {
        try Self.parse(envelope.frame(for: user.rawValue))
    }

    /// The event as a user not listed receives it (the only frame of the single-frame form).
    func event() throws -> (name: String, payload: JSONValue) {
        try Self.parse(envelope.frame)
    }

    var name: String { (try? event().name) ?? "?" }

    static func parse(_ frame: ByteBuffer) throws -> (name: String, payload: JSONValue) {
        let text = String(buffer: frame)
        guard text.hasPrefix("42[") else { throw FrameError("not an event frame: \(text)") }
        let array = try JSONValue(String(text.dropFirst(2)))
        guard array.arrayValue?.count == 2, let name = array[0].stringValue, array[1].objectValue != nil else {
            throw FrameError("not [name, {object}]: \(text)")
        }
        return (name, array[1])
    }

    var description: String { "\(channel): \(raw)" }
}

extension MessageInbox {
    /// Waits for `count` messages on `channel` (all when nil) and returns them parsed.
    func publications(_ count: Int, on channel: String? = nil, within timeout: Duration = .seconds(30)) async throws -> [Publication] {
        try await wait(for: count, on: channel, within: timeout).map(Publication.init)
    }

    /// Every message received so far on `channel`, parsed.
    func publications(on channel: String) throws -> [Publication] {
        try received.filter { $0.channel == channel }.map(Publication.init)
    }
}

extension JSONValue {
    /// The member names of an object (empty for anything else).
    var keys: Set<String> { Set(objectValue.map { Array($0.keys) } ?? []) }
}

/// Users and rooms for the live-room tests.
enum LiveFixture {
    /// `count` users named `<prefix>0…`.
    static func users(_ redis: any RedisClientProtocol, _ count: Int, prefix: String) async throws -> [User] {
        var users: [User] = []
        for index in 0..<count {
            users.append(try await UserStore(redis: redis).create(username: "\(prefix)-user-\(index)", passwordHash: "h", displayName: nil))
        }
        return users
    }

    /// A user as it is encoded in JSON, for exact comparisons.
    static func json(_ value: some Encodable) throws -> JSONValue {
        try JSONValue(String(buffer: try JSONCoding.encode(value)))
    }

    /// `json` read as `type`: for values only the scripts encode (elements), compared decoded.
    static func decode<Value: Decodable>(_ type: Value.Type, _ json: JSONValue) throws -> Value {
        try JSONCoding.decode(type, from: try JSONCoding.encode(json))
    }

    /// Marks `user` present in `room` by hand, as a node would, until `expiry` (epoch ms).
    static func seedPresence(_ redis: any RedisClientProtocol, _ room: RoomID, _ user: UserID, socket: String = "s1", expiry: Int64? = nil) async throws {
        let score = expiry ?? (Timestamp.now().milliseconds + 60_000)
        _ = try await redis.send("ZADD", RedisKeys.roomPresence(room), Int(score), PresenceStore.member(user: user, socket: socket))
    }

    static func hash(_ redis: any RedisClientProtocol, _ key: String) async throws -> [String: String] {
        try await redis.send("HGETALL", key).fields
    }

    static func streamLength(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> Int {
        try await redis.send(RedisCommand("XLEN", RedisKeys.roomStream(room)), as: Int.self)
    }
}
