import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// A lean Socket.IO client for load: connects with a token, joins one room, answers pings, and
/// hands every event frame's text to `onEvent`. Frames are matched by prefix, never decoded.
struct BenchSocket {
    let url: String
    let roomId: String
    /// Frames to send once joined, pulled by the writer loop.
    let outbox: AsyncStream<String>?
    let onJoined: @Sendable () -> Void
    let onEvent: @Sendable (String) -> Void

    func run(logger: Logger) async throws {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 24
        let roomId = self.roomId
        let outbox = self.outbox
        let onJoined = self.onJoined
        let onEvent = self.onEvent
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                var joined = false
                for try await message in inbound.messages(maxSize: 1 << 24) {
                    guard case .text(let text) = message else { continue }
                    if text == "2" {
                        try await outbound.write(.text("3"))
                    } else if text.hasPrefix("0{") {
                        try await outbound.write(.text("40"))
                    } else if text.hasPrefix("40") {
                        try await outbound.write(.text("420[\"room:join\",{\"roomId\":\"\(roomId)\"}]"))
                    } else if text.hasPrefix("430"), !joined {
                        joined = true
                        onJoined()
                        if let outbox {
                            group.addTask {
                                for await frame in outbox {
                                    try await outbound.write(.text(frame))
                                }
                                try await outbound.close(.normalClosure, reason: nil)
                            }
                        }
                    } else if text.hasPrefix("42") {
                        onEvent(text)
                    } else if text.hasPrefix("44") {
                        throw BenchError("connect refused: \(text)")
                    }
                }
                group.cancelAll()
            }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
