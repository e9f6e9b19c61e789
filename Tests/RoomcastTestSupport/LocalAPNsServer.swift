/// A ``LocalHTTP2Server`` standing in for APNs: it answers with APNs's `apns-id` header and
/// `{"reason", "timestamp"}` error bodies.
public final class LocalAPNsServer: Sendable {
    private let server: LocalHTTP2Server

    private init(server: LocalHTTP2Server) {
        self.server = server
    }

    /// Starts on 127.0.0.1; `respond` decides each answer and may await (to hang, say).
    /// - Parameter port: 0 for a free port; a given port lets a test restart a server in place.
    public static func start(
        port: Int = 0,
        respond: @escaping @Sendable (APNsRecordedRequest) async -> APNsStubResponse
    ) async throws -> LocalAPNsServer {
        LocalAPNsServer(server: try await LocalHTTP2Server.start(port: port) { request in await respond(request).http2(for: request) })
    }

    /// The port it listens on.
    public var port: Int { server.port }

    /// `http://127.0.0.1:<port>`, for `APNsEndpoint(url:)`.
    public var url: String { server.url }

    /// Every request so far, in the order they were read in full.
    public func recordedRequests() -> [APNsRecordedRequest] { server.recordedRequests() }

    /// How many connections clients have opened so far.
    public func connectionCount() -> Int { server.connectionCount() }

    /// Stops listening and closes every connection; answers still being awaited are cancelled.
    public func shutdown() async throws { try await server.shutdown() }
}
