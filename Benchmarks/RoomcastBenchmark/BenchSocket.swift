import Foundation
import HummingbirdWSClient
import HummingbirdWSCompression
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// A lean Socket.IO client for load: connects with a token, joins its rooms, answers pings, and
/// hands every event frame's text to `onEvent`. Frames are matched by prefix, never decoded.
struct BenchSocket {
    let url: String
    /// Rooms joined once connected, one after another; none for an idle socket.
    let rooms: [String]
    /// Frames to send once joined, pulled by the writer loop; the socket closes when it ends.
    let outbox: AsyncStream<String>?
    /// Called once CONNECT is acknowledged.
    var onConnected: @Sendable () -> Void = {}
    /// Called once every room is joined.
    var onJoined: @Sendable () -> Void = {}
    var onEvent: @Sendable (String) -> Void = { _ in }

    /// `BENCH_COMPRESS=1`: every socket offers permessage-deflate (what browsers and socket.io-client do).
    static let offersCompression = ProcessInfo.processInfo.environment["BENCH_COMPRESS"] == "1"

    func run(logger: Logger) async throws {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 24
        if Self.offersCompression { configuration.extensions = [WebSocketExtensionFactory.perMessageDeflate(maxDecompressedFrameSize: 1 << 24).build()] }
        let (rooms, outbox, onConnected, onJoined, onEvent) = (self.rooms, self.outbox, self.onConnected, self.onJoined, self.onEvent)
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                var joins = 0
                func joinNext() async throws {
                    guard joins < rooms.count else {
                        onJoined()
                        if let outbox {
                            group.addTask {
                                for await frame in outbox {
                                    try await outbound.write(.text(frame))
                                }
                                try await outbound.close(.normalClosure, reason: nil)
                            }
                        }
                        return
                    }
                    try await outbound.write(.text("42\(joins)[\"room:join\",{\"roomId\":\"\(rooms[joins])\"}]"))
                    joins += 1
                }
                for try await message in inbound.messages(maxSize: 1 << 24) {
                    guard case .text(let text) = message else { continue }
                    if text.hasPrefix("42") {
                        onEvent(text)
                    } else if text == "2" {
                        try await outbound.write(.text("3"))
                    } else if text.hasPrefix("0{") {
                        try await outbound.write(.text("40"))
                    } else if text.hasPrefix("40") {
                        onConnected()
                        try await joinNext()
                    } else if text.hasPrefix("43") {
                        try await joinNext()
                    } else if text.hasPrefix("44") {
                        throw BenchError("connect refused: \(text)")
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// The Engine.IO WebSocket URL of a gateway, with the token in the query.
    static func url(_ base: String, token: String) -> String {
        base.replacingOccurrences(of: "http://", with: "ws://") + "/socket.io/?EIO=4&transport=websocket&token=\(token)"
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
