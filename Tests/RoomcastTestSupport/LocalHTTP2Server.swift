import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Synchronization

/// A local HTTP/2 server (h2c, prior knowledge) standing in for a push service (APNs, Google's
/// token endpoint and FCM): it records every request and answers what the test's `respond`
/// closure says.
public final class LocalHTTP2Server: Sendable {
    private typealias Stream = NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>
    private typealias Connection = (channel: any Channel, multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Stream>)

    /// The port it listens on.
    public let port: Int
    private let listener: any Channel
    private let log: Log
    private let serving: Task<Void, Never>

    /// What the server saw; shared with the task that serves.
    private final class Log: Sendable {
        // Written by the serving tasks, read by the test: a mutex, not an actor, so that tests
        // can read it without awaiting.
        let requests = Mutex<[HTTP2RecordedRequest]>([])
        let connections = Mutex(0)
    }

    private init(port: Int, listener: any Channel, log: Log, serving: Task<Void, Never>) {
        self.port = port
        self.listener = listener
        self.log = log
        self.serving = serving
    }

    /// Starts on 127.0.0.1; `respond` decides each answer and may await (to hang, say).
    /// - Parameter port: 0 for a free port; a given port lets a test restart a server in place.
    public static func start(
        port: Int = 0,
        respond: @escaping @Sendable (HTTP2RecordedRequest) async -> HTTP2StubResponse
    ) async throws -> LocalHTTP2Server {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { () throws -> Connection in
                    let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture { try Stream(wrappingChannelSynchronously: stream) }
                    }
                    return (channel, multiplexer)
                }
            }
        guard let boundPort = listener.channel.localAddress?.port else {
            try? await listener.channel.close()
            throw LocalHTTP2ServerError("the listener has no port")
        }
        let log = Log()
        let serving = Task {
            await withDiscardingTaskGroup { group in
                do {
                    try await listener.executeThenClose { connections in
                        for try await connection in connections {
                            log.connections.withLock { $0 += 1 }
                            group.addTask { await serve(connection, log: log, respond: respond) }
                        }
                    }
                } catch {
                    // The listener closed: shutting down.
                }
            }
        }
        return LocalHTTP2Server(port: boundPort, listener: listener.channel, log: log, serving: serving)
    }

    /// `http://127.0.0.1:<port>`, for `APNsEndpoint(url:)` or `FCMConfiguration`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Every request so far, in the order they were read in full.
    public func recordedRequests() -> [HTTP2RecordedRequest] {
        log.requests.withLock { $0 }
    }

    /// How many connections clients have opened so far.
    public func connectionCount() -> Int {
        log.connections.withLock { $0 }
    }

    /// Stops listening and closes every connection; answers still being awaited are cancelled.
    public func shutdown() async throws {
        // Cancelling closes every connection; closing the listener ends the accept loop.
        serving.cancel()
        try? await listener.close()
        await serving.value
    }

    private static func serve(
        _ connection: Connection,
        log: Log,
        respond: @escaping @Sendable (HTTP2RecordedRequest) async -> HTTP2StubResponse
    ) async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                do {
                    for try await stream in connection.multiplexer.inbound {
                        group.addTask { await serve(stream, on: connection.channel, log: log, respond: respond) }
                    }
                } catch {
                    // The connection failed; its streams end with it.
                }
                connection.channel.close(promise: nil)
            }
        } onCancel: {
            connection.channel.close(promise: nil)
        }
    }

    private static func serve(
        _ stream: Stream,
        on connection: any Channel,
        log: Log,
        respond: @escaping @Sendable (HTTP2RecordedRequest) async -> HTTP2StubResponse
    ) async {
        // A client that resets the stream (say, after its timeout) makes the reads or the
        // writes fail: nothing to answer then.
        try? await stream.executeThenClose { inbound, outbound in
            var head: HPACKHeaders?
            var body = ByteBuffer()
            reading: for try await frame in inbound {
                switch frame {
                case .headers(let headers):
                    if head == nil { head = headers.headers }
                    if headers.endStream { break reading }
                case .data(let data):
                    if case .byteBuffer(var bytes) = data.data { body.writeBuffer(&bytes) }
                    if data.endStream { break reading }
                default:
                    continue
                }
            }
            guard let head else { return }
            let request = HTTP2RecordedRequest(head: head, body: body)
            log.requests.withLock { $0.append(request) }
            let response = await respond(request)
            // Cancelled means shutting down: a connection being torn down sends no more answers.
            guard !Task.isCancelled else { return }
            if response.goAway {
                // Written and flushed before the answer, so the client reads GOAWAY first.
                let streamID = try await stream.channel.getOption(HTTP2StreamChannelOptions.streamID).get()
                let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: streamID, errorCode: .noError, opaqueData: nil))
                try await connection.writeAndFlush(frame)
            }
            var headers: HPACKHeaders = [":status": String(response.status)]
            for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
                headers.add(name: name, value: value)
            }
            guard let json = response.body else {
                try await outbound.write(.headers(.init(headers: headers, endStream: true)))
                return
            }
            let bytes = ByteBuffer(string: json)
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: String(bytes.readableBytes))
            try await outbound.write(.headers(.init(headers: headers)))
            try await outbound.write(.data(.init(data: .byteBuffer(bytes), endStream: true)))
        }
    }
}

/// Why a ``LocalHTTP2Server`` could not start.
public struct LocalHTTP2ServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
