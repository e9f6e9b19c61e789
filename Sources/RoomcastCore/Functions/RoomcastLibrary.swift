import Foundation
public import RedisClient

/// The Roomcast library of Redis Functions: every Lua function (`Scripts/<name>.lua`) and the
/// helpers they share (`Scripts/_*.lua`), loaded once per server (`FUNCTION LOAD`) rather than
/// sent or rebuilt with each call.
public enum RoomcastLibrary {
    /// The library, read once from this module's resources: its version changes with its source.
    public static let library = RedisFunctionLibrary(
        name: "roomcast",
        lua: (helpers + functions.map { $0.name }).map(source).joined(separator: "\n")
    )

    /// The shared helpers, in the order they come before the functions: a Lua local is known
    /// from where it is defined on.
    static let helpers = ["_register", "_emit", "_request", "_reactions", "_elements", "_counts", "_presence"]

    /// Every function's declaration (`RoomcastFunctions`).
    static let functions: [any RoomcastFunction.Type] = [
        RoomcastFunctions.RoomCreate.self, RoomcastFunctions.RoomRename.self,
        RoomcastFunctions.MessageSend.self,
        RoomcastFunctions.ElementCreate.self, RoomcastFunctions.ElementUpdate.self, RoomcastFunctions.ElementTransform.self,
        RoomcastFunctions.ElementFront.self, RoomcastFunctions.ElementDelete.self, RoomcastFunctions.RoomClear.self,
        RoomcastFunctions.ElementsSnapshot.self, RoomcastFunctions.ReactionToggle.self,
        RoomcastFunctions.PresenceJoin.self, RoomcastFunctions.PresenceLeave.self, RoomcastFunctions.PresenceRefresh.self,
        RoomcastFunctions.PresenceReap.self,
        RoomcastFunctions.UserSocketOpen.self, RoomcastFunctions.UserSocketsReap.self, RoomcastFunctions.UserEventPublish.self,
        RoomcastFunctions.NodeHeartbeat.self, RoomcastFunctions.NodeReapClaim.self, RoomcastFunctions.NodeRegistryDrop.self,
        RoomcastFunctions.NotificationCreate.self, RoomcastFunctions.NotificationRead.self, RoomcastFunctions.NotificationReadAll.self,
        RoomcastFunctions.PushTokenClaim.self, RoomcastFunctions.OwnerRelease.self, RoomcastFunctions.PushJobRenew.self,
        RoomcastFunctions.PushJobFinish.self,
        RoomcastFunctions.RateLimitHit.self,
    ]

    /// The Lua of `Scripts/<name>.lua`.
    static func source(_ name: String) -> String {
        guard let url = Bundle.module.url(forResource: name, withExtension: "lua", subdirectory: "Scripts"),
            let source = try? String(contentsOf: url, encoding: .utf8)
        else {
            // The resource bundle ships beside the binary; without it no mutation can run.
            fatalError("Lua file \(name).lua is missing from the RoomcastCore resource bundle")
        }
        return source
    }
}

/// The declarations of the library's functions, one per Lua file.
enum RoomcastFunctions {}

extension RedisClientProtocol {
    /// Runs a function of the Roomcast library and reads its reply: how RoomcastCore runs any Lua.
    /// A function that changes state goes on to ``RedisClientProtocol/call(_:timeout:durability:)``
    /// like every other, which runs it with `FCALL` (and one that only reads with `FCALL_RO`).
    func call<Function: RoomcastFunction>(_ function: Function, timeout: Duration? = nil) async throws(RoomcastError) -> Function.Reply {
        try await mappingRedisErrors { () throws(RedisError) in try await run(function, timeout: timeout) }
    }

    /// ``call(_:timeout:)`` failing with Redis's own error, for a caller that tells failures apart.
    ///
    /// The one place a function's durability is chosen: a committed change
    /// (``RoomcastFunction/isCommittedChange``) waits for the configured
    /// ``RedisConfiguration/writeDurability``, anything else for its master alone.
    func run<Function: RoomcastFunction>(_ function: Function, timeout: Duration? = nil) async throws(RedisError) -> Function.Reply {
        let durability = Function.isCommittedChange ? configuration.writeDurability : .master
        return try Function.Reply(NamedReply(try await call(function.call(), timeout: timeout, durability: durability), of: Function.name))
    }
}
