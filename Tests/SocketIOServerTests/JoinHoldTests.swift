import NIOCore
import NIOEmbedded
import SocketIO
@testable import SocketIOServer
import Synchronization
import Testing

/// A join with a snapshot on one connection (an embedded loop, long-polling, no adapter of its
/// own): broadcasts to the room that arrive while the joiner reads its snapshot are held, then
/// sent after it unless the snapshot holds them already, and none is sent twice.
@Suite("Joins: holding a room's broadcasts around a snapshot")
struct JoinHoldTests {
    static let room = EngineIOConnection.RoomKey(namespace: "/", room: "r")

    static func transport() -> (EngineIOConnection, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        return (EngineIOConnection(id: "s", pollingOn: loop, maxQueuedBytes: 1 << 20), loop)
    }

    static func frame(_ text: String) -> OutboundFrame {
        OutboundFrame(packet: ByteBuffer(string: text))
    }

    static func position(_ major: UInt64) -> BroadcastPosition {
        BroadcastPosition(major: major)
    }

    /// What a poll takes now, the packets apart; [] when nothing waits.
    static func polled(_ transport: EngineIOConnection, _ loop: EmbeddedEventLoop) throws -> [String] {
        let result = Mutex<Result<ByteBuffer, any Error>?>(nil)
        transport.poll().whenComplete { outcome in result.withLock { $0 = outcome } }
        loop.run()
        guard let outcome = result.withLock({ $0 }) else {
            transport.send(EngineIOPacket.noop.encoded())
            loop.run()
            return []
        }
        return String(buffer: try outcome.get()).split(separator: "\u{1E}").map(String.init)
    }

    @Test("broadcasts that come while the snapshot is read follow it; those it holds already are dropped")
    func heldThenReleased() throws {
        let (transport, loop) = Self.transport()
        transport.beginJoin(Self.room)
        _ = transport.deliver(Self.frame("4old"), to: "r", of: "/", position: Self.position(1))
        _ = transport.deliver(Self.frame("4new"), to: "r", of: "/", position: Self.position(3))
        _ = transport.deliver(Self.frame("4other-room"), to: "o", of: "/", position: Self.position(2))
        #expect(try Self.polled(transport, loop) == ["4other-room"])
        transport.completeJoin(Self.room, sending: [Self.frame("4snapshot")], upTo: Self.position(2))
        #expect(try Self.polled(transport, loop) == ["4snapshot", "4new"])
        // Live from now on.
        _ = transport.deliver(Self.frame("4live"), to: "r", of: "/", position: Self.position(4))
        #expect(try Self.polled(transport, loop) == ["4live"])
    }

    @Test("after a snapshot, a late broadcast it holds is dropped until a newer one comes")
    func floorDropsLateRepeats() throws {
        let (transport, loop) = Self.transport()
        transport.beginJoin(Self.room)
        transport.completeJoin(Self.room, sending: [Self.frame("4snapshot")], upTo: Self.position(5))
        _ = transport.deliver(Self.frame("4repeat"), to: "r", of: "/", position: Self.position(5))
        _ = transport.deliver(Self.frame("4newer"), to: "r", of: "/", position: Self.position(6))
        // The floor is gone with the newer one: positions only grow, nothing older can follow.
        _ = transport.deliver(Self.frame("4no-position"), to: "r", of: "/")
        #expect(try Self.polled(transport, loop) == ["4snapshot", "4newer", "4no-position"])
    }

    @Test("a volatile broadcast is dropped while the room is joined, not held; sent otherwise")
    func volatileDropped() throws {
        let (transport, loop) = Self.transport()
        transport.beginJoin(Self.room)
        _ = transport.deliverVolatile(Self.frame("4cursor"), to: "r", of: "/")
        transport.completeJoin(Self.room, sending: [Self.frame("4snapshot")], upTo: nil)
        _ = transport.deliverVolatile(Self.frame("4cursor-after"), to: "r", of: "/")
        #expect(try Self.polled(transport, loop) == ["4snapshot", "4cursor-after"])
    }

    @Test("an abandoned join drops what it held; rooms of other namespaces are not held")
    func abandonedAndNamespaces() throws {
        let (transport, loop) = Self.transport()
        transport.beginJoin(Self.room)
        _ = transport.deliver(Self.frame("4held"), to: "r", of: "/")
        _ = transport.deliver(Self.frame("4/admin,same-name"), to: "r", of: "/admin")
        transport.abandonJoin(Self.room)
        _ = transport.deliver(Self.frame("4after"), to: "r", of: "/")
        #expect(try Self.polled(transport, loop) == ["4/admin,same-name", "4after"])
    }

    @Test("a broadcast with attachments is held and released whole")
    func attachmentsHeldTogether() throws {
        let (transport, loop) = Self.transport()
        transport.beginJoin(Self.room)
        transport.deliver([Self.frame("451-[\"b\"]"), OutboundFrame(binary: ByteBuffer(bytes: [1]))], to: "r", of: "/", position: nil)
        transport.completeJoin(Self.room, sending: [], upTo: nil)
        #expect(try Self.polled(transport, loop) == ["451-[\"b\"]", "bAQ=="])
    }

    @Test("a socket's joins during its connect handler release after the CONNECT answer, and through the adapter")
    func joinWhileConnecting() async throws {
        let adapter = InMemoryAdapter()
        var configuration = SocketServer.Configuration()
        configuration.adapter = { _ in adapter }
        let joined = SocketServer(configuration: configuration)
        joined.namespace("/").onConnect { socket, _ in
            let join = socket.beginJoin("lobby")
            // Published to the room between the subscription and the snapshot: held.
            joined.to("lobby").emit("early", arguments: SocketIOArguments(json: [ByteBuffer(string: "1")]))
            join.complete(sending: [SocketIOFrame.event(name: "snapshot", payload: ByteBuffer(string: "{}"))])
            return .accept
        }
        let loop = EmbeddedEventLoop()
        let transport = EngineIOConnection(id: "s", pollingOn: loop, maxQueuedBytes: 1 << 20)
        let connection = SocketIOConnection(transport: transport, server: joined, handshake: nil)
        connection.received(.message(ByteBuffer(string: "0")))
        let packets = try Self.polled(transport, loop)
        #expect(packets.count == 3 && packets[0].hasPrefix("40{"), "\(packets)")
        #expect(Array(packets.dropFirst()) == [#"42["snapshot",{}]"#, #"42["early",1]"#])
        #expect(adapter.sockets(in: "lobby").count == 1)
        connection.received(.ended(.transportClosed))
        #expect(adapter.sockets(in: "lobby").isEmpty)
    }
}
