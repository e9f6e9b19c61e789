import Hummingbird

/// Engine.IO requests that are not WebSocket upgrades: until long-polling is served, they are
/// refused with the reference server's error bodies, so a client can tell what is wrong.
struct EngineIORoutes {
    func register(on router: Router<RoomcastRequestContext>) {
        // Hummingbird matches `/socket.io/` here too.
        router.get("/socket.io") { request, _ in
                let engineRequest = EngineIORequest(target: request.uri.description)
                let refusal: EngineIORequest.Refusal
                if let reason = engineRequest.websocketRefusal {
                    refusal = reason
                } else {
                    // transport=websocket without the Upgrade headers.
                    refusal = .badRequest
                }
                return Response(
                    status: .badRequest,
                    headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: refusal.body))
                )
        }
    }
}
