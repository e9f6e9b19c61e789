import Logging
import NIOCore
import NIOSSL

/// Owns the client's one connection: hands it out while it is usable, opens a new one when it is
/// not, and makes concurrent sends that find none wait for the same connect instead of racing.
actor APNsConnector {
    private enum State {
        case idle
        case connecting(Task<APNsConnection, any Error>)
        case connected(APNsConnection)
        case shutDown
    }

    private let endpoint: APNsEndpoint
    private let group: any EventLoopGroup
    private let logger: Logger
    private var state = State.idle
    // Loading the system trust roots is costly: done once, on the first TLS connect.
    private var tlsContext: NIOSSLContext?

    init(endpoint: APNsEndpoint, group: any EventLoopGroup, logger: Logger) {
        self.endpoint = endpoint
        self.group = group
        self.logger = logger
    }

    /// A usable connection, opened within `deadline` if there is none.
    func connection(deadline: NIODeadline) async throws(APNsError) -> APNsConnection {
        let task: Task<APNsConnection, any Error>
        switch state {
        case .connected(let connection) where connection.isUsable:
            return connection
        case .connecting(let pending):
            task = pending
        case .idle, .connected:
            // A connection told to go away is dropped, not closed: its streams still in flight
            // get their answers, and APNs closes it afterwards.
            task = try startConnecting(deadline: deadline)
        case .shutDown:
            throw APNsError.connectionClosed.with("the client is shut down")
        }
        do {
            let connection = try await task.value
            // Another caller may have installed it already, or the client was shut down meanwhile.
            switch state {
            case .connecting(let current) where current == task:
                state = .connected(connection)
            case .shutDown:
                await connection.close()
                throw APNsError.connectionClosed.with("the client is shut down")
            default:
                break
            }
            return connection
        } catch {
            if case .connecting(let current) = state, current == task {
                state = .idle
            }
            throw error as? APNsError ?? APNsError.connectionFailed.with("cannot connect to \(endpoint)", underlying: error)
        }
    }

    private func startConnecting(deadline: NIODeadline) throws(APNsError) -> Task<APNsConnection, any Error> {
        let tlsContext = try endpoint.usesTLS ? makeTLSContext() : nil
        let endpoint = endpoint
        let group = group
        let logger = logger
        let task = Task<APNsConnection, any Error> {
            try await APNsConnection.connect(to: endpoint, tlsContext: tlsContext, group: group, deadline: deadline, logger: logger)
        }
        state = .connecting(task)
        return task
    }

    private func makeTLSContext() throws(APNsError) -> NIOSSLContext {
        if let tlsContext { return tlsContext }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["h2"]
        do {
            let context = try NIOSSLContext(configuration: configuration)
            tlsContext = context
            return context
        } catch {
            throw APNsError.connectionFailed.with("cannot set up TLS", underlying: error)
        }
    }

    /// The connection in use, if any: tests wait on its close future.
    var currentConnection: APNsConnection? {
        if case .connected(let connection) = state { return connection }
        return nil
    }

    /// Closes the connection and refuses new sends; sends in flight fail.
    func shutdown() async {
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
