/// Runs `body` with a started stand-in and a client pointed at it, and stops both however `body`
/// ends, the client first: the push clients' fixtures (APNs, FCM) share it.
/// - Parameters:
///   - start: starts the server.
///   - stopServer: stops it.
///   - makeClient: a client of the started server.
///   - stopClient: shuts the client down.
public func withServerAndClient<Server, Client, Result>(
    start: () async throws -> Server,
    stopServer: (Server) async throws -> Void,
    makeClient: (Server) throws -> Client,
    stopClient: (Client) async -> Void,
    _ body: (Server, Client) async throws -> Result
) async throws -> Result {
    let server = try await start()
    let client: Client
    do {
        client = try makeClient(server)
    } catch {
        try? await stopServer(server)
        throw error
    }
    do {
        let result = try await body(server, client)
        await stopClient(client)
        try await stopServer(server)
        return result
    } catch {
        await stopClient(client)
        try? await stopServer(server)
        throw error
    }
}
