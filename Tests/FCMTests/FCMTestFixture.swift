@testable import FCM
import Foundation
import Logging
import NIOCore
import NIOPosix
import RoomcastTestSupport
import Synchronization

/// A service account, a stand-in for Google's endpoints that trusts it, and clients pointed at it.
struct FCMTestFixture {
    let account: FCMTestAccount

    init() throws {
        account = try FCMTestAccount.generate()
    }

    /// A client of `server` signing with this fixture's account (which `server` may not trust),
    /// reading `now` for its token cache.
    func client(
        server: LocalFCMServer, requestTimeout: Duration = .seconds(20), now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> FCMClient {
        let serviceAccount = try FCMServiceAccount(json: Data(account.json(tokenURI: server.tokenURI).utf8))
        let configuration = try FCMConfiguration(serviceAccount: serviceAccount, endpointURL: server.url, requestTimeout: requestTimeout)
        return FCMClient(configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Logger(label: "fcm-test"), now: now)
    }

    /// Runs `body` with a stand-in answering `respond` and a client pointed at it, and shuts both
    /// down however `body` ends.
    func withServer<Result>(
        expiresIn: Int = 3600,
        now: @escaping @Sendable () -> Date = { Date() },
        respond: @escaping @Sendable (LocalFCMServer.Message) async -> HTTP2StubResponse = LocalFCMServer.accepted,
        _ body: (LocalFCMServer, FCMClient) async throws -> Result
    ) async throws -> Result {
        try await withServerAndClient(
            start: { try await LocalFCMServer.start(account: account, expiresIn: expiresIn, respond: respond) },
            stopServer: { try await $0.shutdown() }, makeClient: { try client(server: $0, now: now) }, stopClient: { await $0.shutdown() }, body
        )
    }

    /// A `messages:send` body for `token`.
    static func request(token: String = "fcm-token:APA91bTest", badge: Int = 3) -> FCMRequest {
        let json = #"{"message":{"token":"\#(token)","notification":{"title":"Hi","body":"there"},"data":{"type":"follow"},"apns":{"payload":{"aps":{"badge":\#(badge)}}}}}"#
        return FCMRequest(body: ByteBuffer(string: json))
    }
}

/// A wall clock the test moves by hand.
final class ManualClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_750_000_000))
    var now: Date { date.withLock { $0 } }
    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}
