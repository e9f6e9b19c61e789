package import Logging
package import NIOCore
package import NIOHPACK
import NIOSSL

/// Owns a push client's one connection to one host: hands it out while it is usable, opens a new
/// one when it is not, and makes concurrent sends that find none wait for the same connect
/// instead of racing. The APNs and FCM clients each keep one per host they talk to.
package actor HTTP2Connector {
    private enum State {
        case idle
        case connecting(Task<HTTP2Connection, any Error>)
        case connected(HTTP2Connection)
        case shutDown
    }

    private let endpoint: HTTP2Endpoint
    private let group: any EventLoopGroup
    private let logger: Logger
    private var state = State.idle
    // Loading the system trust roots is costly: done once, on the first TLS connect.
    private var tlsContext: NIOSSLContext?

    /// Creates a connector; nothing connects until the first request.
    package init(endpoint: HTTP2Endpoint, group: any EventLoopGroup, logger: Logger) {
        self.endpoint = endpoint
        self.group = group
        self.logger = logger
    }

    /// A usable connection, opened within `deadline` if there is none.
    package func connection(deadline: NIODeadline) async throws(HTTP2ClientError) -> HTTP2Connection {
        let task: Task<HTTP2Connection, any Error>
        switch state {
        case .connected(let connection) where connection.isUsable:
            return connection
        case .connecting(let pending):
            task = pending
        case .idle, .connected:
            // A connection told to go away is dropped, not closed: its streams still in flight
            // get their answers, and the server closes it afterwards.
            task = try startConnecting(deadline: deadline)
        case .shutDown:
            throw HTTP2ClientError.connectionClosed.with("the client is shut down")
        }
        do {
            let connection = try await task.value
            // Another caller may have installed it already, or the client was shut down meanwhile.
            switch state {
            case .connecting(let current) where current == task:
                state = .connected(connection)
            case .shutDown:
                await connection.close()
                throw HTTP2ClientError.connectionClosed.with("the client is shut down")
            default:
                break
            }
            return connection
        } catch {
            if case .connecting(let current) = state, current == task {
                state = .idle
            }
            throw error as? HTTP2ClientError ?? HTTP2ClientError.connectionFailed.with("cannot connect to \(endpoint)", underlying: error)
        }
    }

    /// Sends one request on the connection (opening one if needed) and waits for the answer
    /// until `deadline`, connecting included.
    package nonisolated func send(headers: HPACKHeaders, body: ByteBuffer, deadline: NIODeadline) async throws(HTTP2ClientError) -> HTTP2Response {
        let connection = try await connection(deadline: deadline)
        return try await connection.send(headers: headers, body: body, deadline: deadline)
    }

    private func startConnecting(deadline: NIODeadline) throws(HTTP2ClientError) -> Task<HTTP2Connection, any Error> {
        let tlsContext = try endpoint.usesTLS ? makeTLSContext() : nil
        let endpoint = endpoint
        let group = group
        let logger = logger
        let task = Task<HTTP2Connection, any Error> {
            try await HTTP2Connection.connect(to: endpoint, tlsContext: tlsContext, group: group, deadline: deadline, logger: logger)
        }
        state = .connecting(task)
        return task
    }

    private func makeTLSContext() throws(HTTP2ClientError) -> NIOSSLContext {
        if let tlsContext { return tlsContext }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["h2"]
        do {
            let context = try NIOSSLContext(configuration: configuration)
            tlsContext = context
            return context
        } catch {
            throw HTTP2ClientError.connectionFailed.with("cannot set up TLS", underlying: error)
        }
    }

    /// The connection in use, if any: tests wait on its close future.
    package var currentConnection: HTTP2Connection? {
        if case .connected(let connection) = state { return connection }
        return nil
    }

    /// Closes the connection and refuses new sends; sends in flight fail.
    package func shutdown() async {
        let previous = state
        state = .shutDown
        switch previous {
        case .connected(let connection):
            await connection.close()
        case .connecting(let task):
            // The waiting caller sees the shutdown and closes what the connect produced.
            task.cancel()
        case .idle, .shutDown:
            break
        }
    }
}
