import Hummingbird
import RoomcastCore

/// The request context of every Roomcast route.
///
/// It carries the authenticated user, set by ``AuthMiddleware`` from a Bearer token; routes that
/// need one call ``requireUser()``.
struct RoomcastRequestContext: RequestContext {
    /// The largest request body decoded by default: 1 MiB.
    static let defaultMaxUploadSize = 1 << 20

    /// Hummingbird's per-request storage (logger, route parameters).
    var coreContext: CoreRequestContextStorage
    /// The user whose valid token came with the request; `nil` when it had no `Authorization`.
    var userID: UserID?
    /// The largest body `request.decode(as:context:)` reads; a larger one answers 413
    /// `payload_too_large`. A middleware may change it for the routes after it.
    var maxUploadSize: Int = Self.defaultMaxUploadSize

    /// The client's IP address as the connection shows it (a proxy's, behind one).
    var peerAddress: String?

    /// Creates the context of a new request.
    init(source: Source) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The authenticated user.
    /// - Throws: `unauthorized` when the request carried no token.
    func requireUser() throws(RoomcastError) -> UserID {
        guard let userID else {
            throw RoomcastError(.unauthorized, "missing bearer token")
        }
        return userID
    }
}
