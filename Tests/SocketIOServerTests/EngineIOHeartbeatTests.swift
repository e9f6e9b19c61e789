import NIOCore
@testable import SocketIOServer
import Testing

/// The heartbeat against the reference server's timers (socketio/engine.io `lib/socket.ts`:
/// `schedulePing` after the open and after each pong, `resetPingTimeout` after each ping), on a
/// clock the test moves by hand.
@Suite("Engine.IO heartbeat: the reference server's ping cadence")
struct EngineIOHeartbeatTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let interval = TimeAmount.milliseconds(25_000)
    static let timeout = TimeAmount.milliseconds(20_000)

    static func heartbeat(connectTimeout: TimeAmount = .seconds(45)) -> EngineIOHeartbeat {
        EngineIOHeartbeat(now: start, pingInterval: interval, pingTimeout: timeout, connectTimeout: connectTimeout)
    }

    @Test("the first ping is due pingInterval after the open packet, and not before")
    func firstPing() {
        var heartbeat = Self.heartbeat()
        #expect(heartbeat.nextDeadline == Self.start + Self.interval)
        let action1 = heartbeat.tick(now: Self.start + Self.interval - .nanoseconds(1), hasConnected: true)
        #expect(action1 == .none)
        let action2 = heartbeat.tick(now: Self.start + Self.interval, hasConnected: true)
        #expect(action2 == .sendPing)
        #expect(heartbeat.isAwaitingPong)
        #expect(heartbeat.nextDeadline == Self.start + Self.interval + Self.timeout)
    }

    @Test("after a pong the next ping is pingInterval later: pings are pingInterval apart, not pingInterval + pingTimeout")
    func cadence() {
        var heartbeat = Self.heartbeat()
        var pings: [NIODeadline] = []
        // The session's timer: it wakes at each deadline (the connect check included).
        while pings.count < 4 {
            var now = heartbeat.nextDeadline
            let action = heartbeat.tick(now: now, hasConnected: true)
            guard action == .sendPing else {
                #expect(action == .none)
                continue
            }
            pings.append(now)
            now = now + .milliseconds(3)  // the client's round trip
            let answered = heartbeat.pongReceived(now: now)
            #expect(answered)
        }
        #expect(pings.first == Self.start + Self.interval)
        for (earlier, later) in zip(pings, pings.dropFirst()) {
            #expect(later - earlier == Self.interval + .milliseconds(3))
        }
    }

    @Test("an unanswered ping closes the socket pingTimeout after it")
    func pingTimeout() {
        var heartbeat = Self.heartbeat()
        let pingAt = Self.start + Self.interval
        let action5 = heartbeat.tick(now: pingAt, hasConnected: true)
        #expect(action5 == .sendPing)
        let action6 = heartbeat.tick(now: pingAt + Self.timeout - .nanoseconds(1), hasConnected: true)
        #expect(action6 == .none)
        let action7 = heartbeat.tick(now: pingAt + Self.timeout, hasConnected: true)
        #expect(action7 == .closeForPingTimeout)
    }

    @Test("a pong that answers no ping neither moves the next ping nor answers the next one")
    func unsolicitedPong() {
        var heartbeat = Self.heartbeat()
        let action8 = heartbeat.pongReceived(now: Self.start + .seconds(10))
        #expect(!action8)
        #expect(heartbeat.nextDeadline == Self.start + Self.interval)
        let pingAt = Self.start + Self.interval
        let action9 = heartbeat.tick(now: pingAt, hasConnected: true)
        #expect(action9 == .sendPing)
        let action10 = heartbeat.tick(now: pingAt + Self.timeout, hasConnected: true)
        #expect(action10 == .closeForPingTimeout)
    }

    @Test("a socket without Socket.IO CONNECT is closed at the connect timeout; a connected one is not")
    func connectTimeout() {
        var silent = Self.heartbeat(connectTimeout: .seconds(5))
        #expect(silent.nextDeadline == Self.start + .seconds(5))
        let action11 = silent.tick(now: Self.start + .seconds(5), hasConnected: false)
        #expect(action11 == .closeForMissingConnect)

        var connected = Self.heartbeat(connectTimeout: .seconds(5))
        let action12 = connected.tick(now: Self.start + .seconds(5), hasConnected: true)
        #expect(action12 == .none)
        #expect(connected.nextDeadline == Self.start + Self.interval)
    }
}
