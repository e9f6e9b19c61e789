import APNs
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import RoomcastTestSupport
import Synchronization

/// A signing key, and clients configured against a local server with it.
struct APNsTestFixture {
    static let topic = "app.roomcast.ios"
    static let teamID = "TEAM123456"
    static let keyID = "KEY7654321"

    let key = APNsTestKey.generate()

    func configuration(url: String, requestTimeout: Duration = .seconds(20)) throws -> APNsConfiguration {
        APNsConfiguration(
            endpoint: try APNsEndpoint(url: url),
            topic: Self.topic,
            teamID: Self.teamID,
            keyID: Self.keyID,
            signingKey: try APNsSigningKey(pem: key.pem),
            requestTimeout: requestTimeout
        )
    }

    func client(url: String, requestTimeout: Duration = .seconds(20)) throws -> APNsClient {
        APNsClient(configuration: try configuration(url: url, requestTimeout: requestTimeout), logger: Logger(label: "apns-test"))
    }

    static func request(token: String = "ab12cd34", payload: String = #"{"aps":{"alert":"hi"}}"#) -> APNsRequest {
        APNsRequest(deviceToken: token, payload: ByteBuffer(string: payload))
    }
}

/// Counts calls across the server's tasks, so a `respond` closure can answer the n-th request
/// differently.
final class CallCounter: Sendable {
    private let count = Mutex(0)

    /// Counts one call and returns its number, from 1.
    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}

extension APNsTestFixture {
    /// Runs `body` with a local server answering `respond` and a client pointed at it, and shuts
    /// both down however `body` ends.
    func withServer<Result>(
        requestTimeout: Duration = .seconds(20),
        respond: @escaping @Sendable (APNsRecordedRequest) async -> APNsStubResponse,
        _ body: (LocalAPNsServer, APNsClient) async throws -> Result
    ) async throws -> Result {
        try await withServerAndClient(
            start: { try await LocalAPNsServer.start(respond: respond) }, stopServer: { try await $0.shutdown() },
            makeClient: { try client(url: $0.url, requestTimeout: requestTimeout) }, stopClient: { await $0.shutdown() }, body
        )
    }
}

/// A loopback TCP port bound without listening: connecting to it is refused at once, and the
/// kernel hands it to nobody else until it is released.
struct ReservedPort {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ReservedPortError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw ReservedPortError()
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func release() {
        close(descriptor)
    }
}

struct ReservedPortError: Error {}

extension LocalAPNsServer {
    /// Starts on a random port below the kernel's ephemeral range (32768 and up), trying again
    /// when one is taken.
    static func startBelowEphemeralPorts(
        respond: @escaping @Sendable (APNsRecordedRequest) async -> APNsStubResponse
    ) async throws -> LocalAPNsServer {
        var lastError: (any Error)?
        for _ in 0..<20 {
            do {
                return try await LocalAPNsServer.start(port: Int.random(in: 20_000..<32_000), respond: respond)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ReservedPortError()
    }

    /// Starts on `port` again, waiting up to ten seconds for the previous server's listener to be
    /// gone (seen taking over two seconds when the whole suite loads both cores).
    static func restart(
        port: Int, respond: @escaping @Sendable (APNsRecordedRequest) async -> APNsStubResponse
    ) async throws -> LocalAPNsServer {
        for _ in 0..<200 {
            if let server = try? await LocalAPNsServer.start(port: port, respond: respond) { return server }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await LocalAPNsServer.start(port: port, respond: respond)
    }
}
