import HTTPTypes
import Hummingbird
import NIOCore
import NIOWebSocket
import SocketIO

/// Engine.IO over HTTP long-polling (`transport=polling`): the handshake, polls (GET) and sends
/// (POST). Anything else gets the reference server's error bodies, so a client can tell what is
/// wrong. WebSocket upgrades never reach the router (see ``EngineIOServer/webSocketRoute``).
struct EngineIORoutes {
    let server: EngineIOServer

    func register<Context: RequestContext>(on router: Router<Context>) {
        // Hummingbird matches `<path>/` here too.
        let path = RouterPath(server.path)
        router.get(path) { request, _ in
            try await poll(request)
        }
        router.post(path) { request, _ in
            try await send(request)
        }
        // Engine.IO knows GET and POST only; the reference server answers anything else 400.
        for method in [HTTPRequest.Method.put, .delete, .patch] {
            router.on(path, method: method) { request, _ in
                let engineRequest = EngineIORequest(target: request.uri.description)
                return Self.refused(engineRequest.sid == nil ? .badHandshakeMethod : .badRequest)
            }
        }
    }

    /// A handshake (no `sid`) or a poll: answered with the packets waiting, once there are some.
    private func poll(_ request: Request) async throws -> Response {
        let engineRequest = EngineIORequest(target: request.uri.description)
        if let refusal = engineRequest.pollingRefusal { return Self.refused(refusal) }
        let entry: PollingSessions.Entry
        let polled: EventLoopFuture<ByteBuffer>
        if let sid = engineRequest.sid {
            guard let existing = server.sessions.entry(sid) else { return Self.refused(.sessionIDUnknown) }
            // One step on the session's loop, in order with what is POSTed to it: a session whose
            // ping timed out is gone, whether or not its timer has fired yet.
            let engine = existing.engine
            let poll = try await engine.eventLoop.submit { engine.value.runDueTimers() ? existing.session.poll() : nil }.get()
            guard let poll else { return Self.refused(.sessionIDUnknown) }
            entry = existing
            polled = poll
        } else {
            do {
                entry = try await server.sessions.open(for: server, opening: EngineIOOpening(request: engineRequest, headers: request.headers))
            } catch is PollingSessions.Draining {
                return Self.draining()
            }
            polled = entry.session.poll()
        }
        do {
            return Self.text(try await polled.get())
        } catch EngineIOConnection.PollError.overlapping {
            // Engine.IO allows one poll at a time: a second one ends the session.
            let engine = entry.engine
            engine.eventLoop.execute { engine.value.close(.policyViolation, reason: "overlapping polls", because: .parseError) }
            return Self.refused(.badRequest)
        } catch {
            // A drain ended the session under this poll: an HTTP error, which every client
            // takes as a lost transport and reconnects after (see ``EngineIOSession/drain()``).
            return server.sessions.isDraining ? Self.draining() : Self.refused(.badRequest)
        }
    }

    /// Packets from the client, joined by 0x1E.
    private func send(_ request: Request) async throws -> Response {
        let engineRequest = EngineIORequest(target: request.uri.description)
        if let refusal = engineRequest.pollingRefusal { return Self.refused(refusal) }
        // A handshake is a GET, as in the reference server.
        guard let sid = engineRequest.sid else { return Self.refused(.badHandshakeMethod) }
        guard let entry = server.sessions.entry(sid) else { return Self.refused(.sessionIDUnknown) }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: server.settings.maxPayload)
        } catch {
            return Response(
                status: .contentTooLarge, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"code":3,"message":"Payload too large"}"#))
            )
        }
        let engine = entry.engine
        let packets: [EngineIOPacket]
        do {
            packets = try EngineIOPayload.decode(body)
        } catch {
            // What cannot be decoded ends the session, as in the reference server: before the
            // answer, so that no poll sent after it finds the session.
            try await engine.eventLoop.submit { engine.value.close(.protocolError, reason: "invalid Engine.IO payload", because: .parseError) }.get()
            return Self.refused(.badRequest)
        }
        engine.eventLoop.execute {
            for packet in packets { engine.value.received(packet) }
        }
        return Self.text(ByteBuffer(string: "ok"))
    }

    private static func text(_ body: ByteBuffer) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain; charset=UTF-8"], body: .init(byteBuffer: body))
    }

    /// The server is shutting down: 503, for a handshake and for a poll its drain ended.
    private static func draining() -> Response {
        Response(
            status: .serviceUnavailable, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"message":"Server shutting down"}"#))
        )
    }

    private static func refused(_ refusal: EngineIORequest.Refusal) -> Response {
        Response(status: .badRequest, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: refusal.body)))
    }
}
