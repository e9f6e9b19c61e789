import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// What a node reads back after a pub/sub outage: every event after its last offset, or `nil`
/// when the stream no longer holds them all, so that the node resyncs its sockets instead of
/// leaving a hole.
@Suite("Gap reads against a real redis-server")
struct StreamBackfillTests {
    @Test("events after an offset, oldest first; none for an empty or missing stream")
    func whole() async throws {
        try await withTestRedis { redis, _ in
            let user = UserID.random()
            let log = UserEventLog(redis: redis)
            #expect(try await log.events(of: user, after: StreamOffset("0-0")!)?.isEmpty == true)
            var ids: [String] = []
            for index in 0..<5 {
                ids.append(try await redis.send(RedisCommand("XADD", RedisKeys.userStream(user), "*", "f", "frame \(index)"), as: String.self))
            }
            let events = try #require(try await log.events(of: user, after: StreamOffset(ids[1])!))
            #expect(events.map { String(buffer: $0.frame) } == ["frame 2", "frame 3", "frame 4"])
            #expect(events.map { $0.offset.map(String.init) } == ids.suffix(3).map { $0 })
            #expect(try await log.events(of: user, after: StreamOffset(ids[4])!)?.isEmpty == true)
        }
    }

    @Test("trimmed after the offset, or more than maximumReplay: nil (the node resyncs); offset still kept: whole")
    func incomplete() async throws {
        try await withTestRedis { redis, _ in
            let room = RoomID.random()
            let key = RedisKeys.roomStream(room)
            var ids: [String] = []
            for index in 0..<10 {
                ids.append(try await redis.send(RedisCommand("XADD", key, "*", "p", "42[\"x\",{\"n\":\(index),\"offset\":\"", "s", "\"}]"), as: String.self))
            }
            var log = RoomEventLog(redis: redis)
            // The first four go: a node that last forwarded the 3rd missed the 4th for good.
            _ = try await redis.send(RedisCommand("XTRIM", key, "MAXLEN", 6))
            #expect(try await log.events(of: room, after: StreamOffset(ids[2])!) == nil)
            // Its last offset itself trimmed, the stream cannot tell whether anything came between
            // it and the first entry kept: counted as lost (the node resyncs), never as whole.
            #expect(try await log.events(of: room, after: StreamOffset(ids[3])!) == nil)
            // From the first entry kept on, nothing trimmed was missed.
            #expect(try await log.events(of: room, after: StreamOffset(ids[4])!)?.count == 5)
            #expect(try await log.events(of: room, after: StreamOffset(ids[6])!)?.count == 3)
            // More than maximumReplay cannot be sent in one piece either.
            log.maximumReplay = 2
            #expect(try await log.events(of: room, after: StreamOffset(ids[6])!) == nil)
            #expect(try await log.events(of: room, after: StreamOffset(ids[7])!)?.count == 2)
        }
    }
}
