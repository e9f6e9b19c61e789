import Foundation
import RoomcastCore
@testable import RoomcastServer
import Testing

/// What the documentation's prose says about the code, outside the reference tables that
/// `ReferenceDocsTests` checks: a setting's default written beside its key, the Redis keys and
/// channels `RedisKeys` builds, and the labels the node logs under. Each is read where the code
/// defines it (the settings' declarations, `RedisKeys` itself, the sources' loggers).
@Suite("The documentation's prose matches the code")
struct ProseDocsTests {
    // MARK: Defaults

    @Test("a default written beside a setting's key, `key` (value), is the setting's default")
    func defaultsInProse() throws {
        let settings = Dictionary(
            GatewaySettings.sections.flatMap(\.settings).filter { $0.retirement == nil }.map { ($0.key, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        var checked = 0
        for path in try Self.prosePaths() {
            let text = try ReferenceDocsTests.read(path)
            for mention in Self.settingMentions(in: text) {
                guard let setting = settings[mention.key], let defaultText = setting.defaultValue, let expected = Double(defaultText),
                      let written = Self.quantity(mention.parenthesis, unit: setting.unit)
                else { continue }
                checked += 1
                #expect(
                    abs(written - Self.base(expected, unit: setting.unit)) < 1e-9,
                    "\(path): `\(mention.key)` (\(mention.parenthesis)), but its default is \(defaultText)\(setting.unit.map { " \($0)" } ?? "")"
                )
            }
        }
        // The documents write about twenty-five defaults this way; none found means the reading broke.
        #expect(checked >= 20, "defaults checked: \(checked)")
    }

    @Test("the reading of a written default: units, thousands separators, words around it")
    func quantityReading() {
        #expect(Self.quantity("30 s", unit: "ms") == 30_000_000)
        #expect(Self.quantity("5 min", unit: "ms") == 300_000_000)
        #expect(Self.quantity("500 ms by default, shorter than …", unit: "ms") == 500_000)
        #expect(Self.quantity("1 MiB", unit: "bytes") == 1_048_576)
        #expect(Self.quantity("1,000,000 bytes", unit: "bytes") == 1_000_000)
        #expect(Self.quantity("16,000 B; at least 1", unit: "bytes") == 16_000)
        #expect(Self.quantity("10,000 messages", unit: nil) == 10_000)
        #expect(Self.quantity("`ROOMCAST_REDIS_WAIT_REPLICAS`, 0 by default: off", unit: nil) == 0)
        #expect(Self.quantity("0 by default, at most 1,000", unit: "µs") == 0)
        #expect(Self.quantity("15 seconds", unit: "ms") == 15_000_000)
        #expect(Self.quantity("an hour", unit: "ms") == nil)
        #expect(Self.quantity("the compose files do", unit: nil) == nil)
    }

    /// Every `` `section.key` (…) `` of a document: the key and what the parenthesis holds.
    static func settingMentions(in text: String) -> [(key: String, parenthesis: String)] {
        guard let expression = try? NSRegularExpression(pattern: #"`([a-z_]+\.[a-z_]+|[a-z_]+)` \(([^()]*)\)"#) else { return [] }
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            guard let key = Range(match.range(at: 1), in: text), let inner = Range(match.range(at: 2), in: text) else { return nil }
            return (String(text[key]), String(text[inner]))
        }
    }

    /// The quantity a parenthesis starts with (`30 s`, `1 MiB`, `5,000`), or says is the default
    /// (`…, 0 by default`), in the setting's base unit: microseconds for a duration, bytes for a
    /// size; `nil` when it writes no number there.
    static func quantity(_ parenthesis: String, unit: String?) -> Double? {
        let number = #"([0-9][0-9,]*(?:\.[0-9]+)?)(?:\s*(µs|us|ms|seconds?|minutes?|hours?|s|min|h|B|bytes|KiB|MiB|GiB)\b)?"#
        let patterns = ["^" + number, number + #"\s+by default"#]
        for pattern in patterns {
            guard let expression = try? NSRegularExpression(pattern: pattern),
                  let match = expression.firstMatch(in: parenthesis, range: NSRange(parenthesis.startIndex..., in: parenthesis)),
                  let digits = Range(match.range(at: 1), in: parenthesis),
                  let value = Double(parenthesis[digits].replacingOccurrences(of: ",", with: ""))
            else { continue }
            let written = Range(match.range(at: 2), in: parenthesis).map { String(parenthesis[$0]) }
            return scaled(value, written: written, unit: unit)
        }
        return nil
    }

    private static let microseconds: [String: Double] = [
        "µs": 1, "us": 1, "ms": 1e3, "s": 1e6, "second": 1e6, "seconds": 1e6, "min": 60e6, "minute": 60e6, "minutes": 60e6,
        "h": 3_600e6, "hour": 3_600e6, "hours": 3_600e6,
    ]
    private static let bytes: [String: Double] = ["B": 1, "bytes": 1, "KiB": 1_024, "MiB": 1_048_576, "GiB": 1_073_741_824]

    /// `value` written with the unit `written` (none: the setting's own), in the base unit of the
    /// setting's `unit`; `nil` when the written unit is not one of the setting's kind.
    private static func scaled(_ value: Double, written: String?, unit: String?) -> Double? {
        guard let written else { return base(value, unit: unit) }
        if let unit, microseconds[unit] != nil { return microseconds[written].map { value * $0 } }
        if unit == "bytes" { return bytes[written].map { value * $0 } }
        return nil
    }

    /// A setting's value in its base unit: microseconds for a duration, else as it is.
    static func base(_ value: Double, unit: String?) -> Double {
        unit.flatMap { microseconds[$0] }.map { value * $0 } ?? value
    }

    /// The documents whose prose is checked: README.md, CONTRIBUTING.md and docs/, but the
    /// configuration reference, which is made from the declarations.
    static func prosePaths() throws -> [String] {
        let docs = ReferenceDocsTests.repository.appendingPathComponent("docs")
        guard let walker = FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) else { return [] }
        var paths = ["README.md", "CONTRIBUTING.md"]
        for case let url as URL in walker where url.pathExtension == "md" {
            let path = "docs/" + url.path.dropFirst(docs.path.count + 1)
            if path != "docs/operations/configuration.md" { paths.append(path) }
        }
        #expect(paths.count >= 10, "\(paths)")
        return paths.sorted()
    }

    // MARK: Redis keys

    /// What each `public static` member of `RedisKeys` builds, with placeholder ids: a key, a
    /// channel, or nothing that is a key of its own (a prefix, a parser, a group name). A member
    /// declared in `RedisKeys` but missing here fails `redisKeys`: add it here, and its row to
    /// docs/internals/redis-keys.md.
    static func redisKeyMembers() -> [String: RedisName] {
        let room = RoomID("ROOMX")!, user = UserID("USERX")!, element = ElementID("ELEMENTX")!
        let node = NodeID("n0den0de")!, request = RequestID("REQUESTX")!
        return [
            "user(_:)": .key(RedisKeys.user(user)),
            "userRooms(_:)": .key(RedisKeys.userRooms(user)),
            "userSockets(_:)": .key(RedisKeys.userSockets(user)),
            "userStream(_:)": .key(RedisKeys.userStream(user)),
            "email(_:)": .key(RedisKeys.email("ADDRESSX")),
            "username(_:)": .key(RedisKeys.username("NAMEX")),
            "room(_:)": .key(RedisKeys.room(room)),
            "roomProfiles(_:)": .key(RedisKeys.roomProfiles(room)),
            "roomParticipants(_:)": .key(RedisKeys.roomParticipants(room)),
            "roomMessages(_:)": .key(RedisKeys.roomMessages(room)),
            "roomStream(_:)": .key(RedisKeys.roomStream(room)),
            "roomRequest(_:user:operation:request:)": .keys(
                [RedisKeys.RequestOperation.elementCreate, .messageSend, .reactionToggle].map {
                    RedisKeys.roomRequest(room, user: user, operation: $0, request: request)
                }
            ),
            "roomChannel(_:)": .channel(RedisKeys.roomChannel(room)),
            "room(ofChannel:)": .none,
            // A node's name for one user's local sockets, not a Redis channel.
            "userChannel(_:)": .none,
            "user(ofChannel:)": .none,
            "nodeEvents(_:slotTag:)": .channel(RedisKeys.nodeEvents(node, slotTag: "TAGX")),
            "nodeEventsRoute(forUser:routing:)": .none,
            "roomUnseenElements(_:)": .key(RedisKeys.roomUnseenElements(room)),
            "roomMessageReads(_:)": .key(RedisKeys.roomMessageReads(room)),
            "roomPresence(_:)": .key(RedisKeys.roomPresence(room)),
            "allUsers": .key(RedisKeys.allUsers),
            "roomZOrder(_:)": .key(RedisKeys.roomZOrder(room)),
            "elementPrefix(_:)": .none,
            "element(_:in:)": .key(RedisKeys.element(element, in: room)),
            "elementReactions(_:in:)": .key(RedisKeys.elementReactions(element, in: room)),
            "reactionsSuffix": .none,
            "node(_:)": .key(RedisKeys.node(node)),
            "nodeRooms(_:)": .key(RedisKeys.nodeRooms(node)),
            "nodeUsers(_:)": .key(RedisKeys.nodeUsers(node)),
            "nodeReaping(_:)": .key(RedisKeys.nodeReaping(node)),
            "rateLimit(_:)": .key(RedisKeys.rateLimit("SCOPEX")),
            "nodeRegistry": .key(RedisKeys.nodeRegistry),
            "userNotifications(_:)": .key(RedisKeys.userNotifications(user)),
            "userNotificationData(_:)": .key(RedisKeys.userNotificationData(user)),
            "userUnreadNotifications(_:)": .key(RedisKeys.userUnreadNotifications(user)),
            "userPushTokens(_:)": .key(RedisKeys.userPushTokens(user)),
            "pushTokenOwner(_:)": .key(RedisKeys.pushTokenOwner("TOKENX")),
            "pushTokenInstallation(_:)": .key(RedisKeys.pushTokenInstallation("TOKENX")),
            "pushOutbox": .key(RedisKeys.pushOutbox),
            "pushOutbox(for:)": .keys([PushToken.ios, PushToken.fcm].map { RedisKeys.pushOutbox(for: $0) }),
            "pushDeadLetters": .key(RedisKeys.pushDeadLetters),
            // A consumer group of the outboxes, not a key: the outboxes' rows name it.
            "pushWorkersGroup": .none,
        ]
    }

    enum RedisName {
        case key(String), keys([String]), channel(String), none
    }

    /// A key or channel as a pattern: the placeholder ids above, and `<…>` in the document, both
    /// become `*`; a request's operation too.
    static func pattern(_ name: String) -> String {
        var text = name.replacingOccurrences(of: #"<[^>]*>"#, with: "*", options: .regularExpression)
        for placeholder in ["ROOMX", "USERX", "ELEMENTX", "n0den0de", "TAGX", "REQUESTX", "ADDRESSX", "NAMEX", "SCOPEX", "TOKENX"] {
            text = text.replacingOccurrences(of: placeholder, with: "*", options: .caseInsensitive)
        }
        for operation in [RedisKeys.RequestOperation.elementCreate, .messageSend, .reactionToggle] {
            text = text.replacingOccurrences(of: ":\(operation.rawValue):", with: ":*:")
        }
        return text
    }

    @Test("docs/internals/redis-keys.md lists every key and channel RedisKeys builds, and no other")
    func redisKeys() throws {
        let declared = try Self.redisKeyMembersDeclared()
        let members = Self.redisKeyMembers()
        #expect(declared.count >= 30, "\(declared.sorted())")
        #expect(declared.subtracting(members.keys).isEmpty, "in RedisKeys but not in ProseDocsTests.redisKeyMembers: \(declared.subtracting(members.keys).sorted())")
        #expect(Set(members.keys).subtracting(declared).isEmpty, "no longer in RedisKeys: \(Set(members.keys).subtracting(declared).sorted())")

        let documentedKeys = Set(try ReferenceDocsTests.names(ReferenceDocsTests.rows(of: "docs/internals/redis-keys.md", section: "## Keys")).map(Self.pattern))
        let documentedChannels = Set(try ReferenceDocsTests.names(ReferenceDocsTests.rows(of: "docs/internals/redis-keys.md", section: "## Channels")).map(Self.pattern))
        var keys: Set<String> = [], channels: Set<String> = []
        for (_, name) in members {
            switch name {
            case .key(let key): keys.insert(Self.pattern(key))
            case .keys(let many): keys.formUnion(many.map(Self.pattern))
            case .channel(let channel): channels.insert(Self.pattern(channel))
            case .none: break
            }
        }
        #expect(keys.subtracting(documentedKeys).isEmpty, "keys RedisKeys builds that redis-keys.md does not list: \(keys.subtracting(documentedKeys).sorted())")
        #expect(documentedKeys.subtracting(keys).isEmpty, "keys redis-keys.md lists that RedisKeys does not build: \(documentedKeys.subtracting(keys).sorted())")
        #expect(channels.subtracting(documentedChannels).isEmpty, "channels not in redis-keys.md: \(channels.subtracting(documentedChannels).sorted())")
        #expect(documentedChannels.subtracting(channels).isEmpty, "channels in redis-keys.md that RedisKeys does not build: \(documentedChannels.subtracting(channels).sorted())")
    }

    /// The `public static` members declared in `RedisKeys` and its extensions, as
    /// `name(label:label:)` for a function and `name` for a constant.
    static func redisKeyMembersDeclared() throws -> Set<String> {
        let folder = ReferenceDocsTests.repository.appendingPathComponent("Sources/RoomcastCore/Redis")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("RedisKeys") && $0.hasSuffix(".swift") }
        var members: Set<String> = []
        for file in files {
            let source = try ReferenceDocsTests.read("Sources/RoomcastCore/Redis/\(file)")
            let expression = try NSRegularExpression(pattern: #"public static (func|let) (\w+)(\(([^)]*)\))?"#)
            for match in expression.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
                guard let name = Range(match.range(at: 2), in: source).map({ String(source[$0]) }) else { continue }
                guard let parameters = Range(match.range(at: 4), in: source).map({ String(source[$0]) }) else {
                    members.insert(name)
                    continue
                }
                let labels = parameters.split(separator: ",").map { parameter in
                    parameter.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
                }
                members.insert("\(name)(\(labels.map { $0.hasSuffix(":") ? $0 : "\($0):" }.joined()))")
            }
        }
        return members
    }

    // MARK: Log labels

    /// The gateway's own targets: the libraries under them (RedisClient, APNs, FCM, SocketIOServer)
    /// log under the logger the gateway gives them.
    static let gatewayTargets = ["Sources/RoomcastCore", "Sources/RoomcastServer", "Sources/roomcast"]

    @Test("docs/operations/observability.md lists every label the node logs under, and no other")
    func logLabels() throws {
        let expression = try NSRegularExpression(pattern: #"(?:Logger\(label|with\(label): "([^"]+)""#)
        var used: Set<String> = []
        for target in Self.gatewayTargets {
            let folder = ReferenceDocsTests.repository.appendingPathComponent(target)
            guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let source = try String(contentsOf: url, encoding: .utf8)
                used.formUnion(ReferenceDocsTests.matches(of: expression.pattern, in: source))
            }
        }
        #expect(used.count >= 10, "\(used.sorted())")
        let documented = try ReferenceDocsTests.names(ReferenceDocsTests.rows(of: "docs/operations/observability.md", section: "### Log labels"))
        #expect(used.subtracting(documented).isEmpty, "logged under but not in observability.md: \(used.subtracting(documented).sorted())")
        #expect(documented.subtracting(used).isEmpty, "in observability.md but no logger has it: \(documented.subtracting(used).sorted())")
    }
}
