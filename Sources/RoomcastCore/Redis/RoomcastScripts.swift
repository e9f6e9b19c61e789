import Foundation
public import RedisClient

/// The Lua scripts of every mutation, read once from this module's resources.
public enum RoomcastScripts {
    /// `room_create.lua`: a room and its participants.
    public static let roomCreate = script("room_create")
    /// `message_send.lua`: store, append and publish a chat message.
    public static let messageSend = script("message_send")

    /// Every script, for loading (and syntax-checking) at start-up.
    public static let all = [roomCreate, messageSend]

    private static func script(_ name: String) -> RedisScript {
        guard let url = Bundle.module.url(forResource: name, withExtension: "lua", subdirectory: "Scripts"),
            let source = try? String(contentsOf: url, encoding: .utf8)
        else {
            // The resource bundle ships beside the binary; without it no mutation can run.
            fatalError("Lua script \(name).lua is missing from the RoomcastCore resource bundle")
        }
        return RedisScript(name: name, source: source)
    }
}
