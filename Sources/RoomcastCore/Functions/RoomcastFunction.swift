import RedisClient

/// One function of the Roomcast library (`Scripts/<name>.lua`), declared once: the keys and the
/// arguments it takes, each by its Lua name, and the reply it answers, read by name.
///
/// The call (`FCALL <name> <numkeys> <keys…> <arguments…>`) and the keys a cluster routes it by are
/// built from ``keys`` and ``arguments``, in their order. `RoomcastLibraryTests` holds every
/// declaration to the header of its Lua file and to the Lua's own `unpack(keys)`/`unpack(args)`
/// (the same names, in the same order), so a mismatch fails in CI, not against a production Redis.
protocol RoomcastFunction: Sendable {
    /// What it answers.
    associatedtype Reply: FunctionReply

    /// The function's name in the library (its Lua file's).
    static var name: String { get }
    /// Whether it only reads: registered `no-writes` and called with `FCALL_RO`.
    static var isReadOnly: Bool { get }
    /// Whether it commits a change a client asked for and is told is done (a room created or
    /// renamed, a message, an element's change, a reaction): its reply waits for the deployment's
    /// write durability (``RedisConfiguration/writeDurability``, `redis.wait_replicas`), `WAIT`
    /// sent after it on the same connection. The node's own bookkeeping (presence, heartbeats,
    /// rate limits, push jobs) does not wait: it is rebuilt or retried when a failover loses it.
    static var isCommittedChange: Bool { get }
    /// The keys it takes, in order (`KEYS[1]`, `KEYS[2]` … of its Lua header).
    static var keys: [FunctionKey<Self>] { get }
    /// The arguments it takes, in order (`ARGV[1]` …).
    static var arguments: [FunctionArgument<Self>] { get }
    /// The library it is registered in: ``RoomcastLibrary/library``, unless a test loads a small
    /// library of its own.
    static var library: RedisFunctionLibrary { get }
}

extension RoomcastFunction {
    static var isReadOnly: Bool { false }
    static var isCommittedChange: Bool { false }
    static var library: RedisFunctionLibrary { RoomcastLibrary.library }

    /// The call this declaration makes, in its ``library``.
    func call() -> RedisFunctionCall {
        call(in: Self.library)
    }

    /// The call this declaration makes, in `library`.
    func call(in library: RedisFunctionLibrary) -> RedisFunctionCall {
        var keys: [String] = []
        keys.reserveCapacity(Self.keys.count)
        for key in Self.keys {
            guard let value = key.value(self) else {
                // Lua takes keys by position: only the last ones may be left out.
                assert(key.isOptional, "\(Self.name): key \(key.name) is required")
                continue
            }
            assert(keys.count == Self.keys.firstIndex { $0.name == key.name }, "\(Self.name): key \(key.name) follows one left out")
            keys.append(value)
        }
        var arguments: [any RedisArgument] = []
        arguments.reserveCapacity(Self.arguments.count)
        for argument in Self.arguments {
            argument.append(self, &arguments)
        }
        return RedisFunctionCall(Self.name, in: library, keys: keys, arguments: arguments, isReadOnly: Self.isReadOnly)
    }
}

/// One key of a function: its name in the Lua and how a call finds it.
struct FunctionKey<Function>: Sendable {
    /// The Lua local the function reads it into (`z_order`).
    let name: String
    /// A call may leave it out (one of the last keys; `?` in the Lua header).
    let isOptional: Bool
    let value: @Sendable (Function) -> String?

    /// A key every call has.
    init(_ name: String, _ value: @escaping @Sendable (Function) -> String) {
        self.name = name
        self.isOptional = false
        self.value = value
    }

    private init(optional name: String, _ value: @escaping @Sendable (Function) -> String?) {
        self.name = name
        self.isOptional = true
        self.value = value
    }

    /// A key a call may leave out (nil): one of the function's last keys.
    static func optional(_ name: String, _ value: @escaping @Sendable (Function) -> String?) -> Self {
        Self(optional: name, value)
    }
}

/// One argument of a function: its name in the Lua and its value in a call.
struct FunctionArgument<Function>: Sendable {
    /// The Lua local the function reads it into (`element_id`).
    let name: String
    /// The last argument, standing for the rest of them (`ARGV[i…]` in the Lua header).
    let isVariadic: Bool
    let append: @Sendable (Function, inout [any RedisArgument]) -> Void

    /// An argument of one word.
    init(_ name: String, _ value: @escaping @Sendable (Function) -> any RedisArgument) {
        self.name = name
        self.isVariadic = false
        self.append = { function, words in words.append(value(function)) }
    }

    private init(rest name: String, _ values: @escaping @Sendable (Function) -> [any RedisArgument]) {
        self.name = name
        self.isVariadic = true
        self.append = { function, words in words.append(contentsOf: values(function)) }
    }

    /// The function's last argument: every word after the others.
    static func rest(_ name: String, _ values: @escaping @Sendable (Function) -> [any RedisArgument]) -> Self {
        Self(rest: name, values)
    }

    /// `'1'` or `'0'`.
    static func flag(_ name: String, _ value: @escaping @Sendable (Function) -> Bool) -> Self {
        Self(name) { value($0) ? "1" : "0" }
    }

    /// Epoch milliseconds.
    static func time(_ name: String, _ value: @escaping @Sendable (Function) -> Timestamp) -> Self {
        Self(name) { Int(value($0).milliseconds) }
    }

    /// Milliseconds.
    static func milliseconds(_ name: String, _ value: @escaping @Sendable (Function) -> Duration) -> Self {
        Self(name) { value($0).wholeMilliseconds }
    }
}

/// The fields of a function's reply, in the order its Lua header's `REPLY` line lists them; a
/// case's raw value is the field's name in the reply.
protocol ReplyField: CaseIterable, RawRepresentable, Hashable, Sendable where RawValue == String, AllCases: RandomAccessCollection {
    /// A field the reply may not have (`?` in the Lua header).
    var isOptional: Bool { get }
}

extension ReplyField {
    var isOptional: Bool { false }
}
