/// Why a `SocketIOTestClient` call failed.
///
/// A plain enum, unlike the codec's errors: tests match the cases directly, e.g.
/// `catch SocketIOTestError.connectError(let message, let code)`.
public enum SocketIOTestError: Error, CustomStringConvertible, Sendable {
    /// Nothing matching `awaiting` arrived within `after`; `recentFrames` are the last text frames received.
    case timeout(awaiting: String, after: Duration, recentFrames: [String])
    /// The server refused the CONNECT with `44{"message":…,"data":{"code":…}}`.
    case connectError(message: String, code: String?)
    /// The WebSocket could not be opened (connection refused, upgrade declined) or closed before the open packet.
    case connectionFailed(reason: String)
    /// The WebSocket is closed; `code` is the server's close code, when it sent a close frame.
    case closed(code: Int?, reason: String?)
    /// The server sent Socket.IO DISCONNECT (`41`) for the client's namespace.
    case disconnected
    /// The server sent something that is not valid Engine.IO v4 / Socket.IO v5 for this client.
    case protocolViolation(String)
    /// `expectNoEvent` saw the event it was told should not come.
    case unexpectedEvent(name: String, payload: String)
    /// Text given to `JSONValue` is not one JSON value.
    case invalidJSON(String)

    /// One line for test failure output.
    public var description: String {
        switch self {
        case .timeout(let awaiting, let after, let recentFrames):
            let recent = recentFrames.isEmpty ? "none" : recentFrames.joined(separator: " | ")
            return "timed out after \(after) awaiting \(awaiting); last frames received: \(recent)"
        case .connectError(let message, let code):
            return "CONNECT refused: \(message) (code \(code ?? "none"))"
        case .connectionFailed(let reason):
            return "WebSocket connection failed: \(reason)"
        case .closed(let code, let reason):
            return "WebSocket closed (code \(code.map(String.init) ?? "none")\(reason.map { ", \($0)" } ?? ""))"
        case .disconnected:
            return "the server disconnected the namespace (41)"
        case .protocolViolation(let detail):
            return "protocol violation: \(detail)"
        case .unexpectedEvent(let name, let payload):
            return "unexpected event '\(name)': \(payload)"
        case .invalidJSON(let detail):
            return "invalid JSON: \(detail)"
        }
    }
}
