public import Foundation
public import NIOCore

/// What an Engine.IO session hands the application above it, in the order it came.
public enum EngineIOInbound: Sendable {
    /// A message packet's data (for Socket.IO, one packet's text).
    case message(ByteBuffer)
    /// Binary data: a WebSocket binary frame, or a polling payload's `b` packet decoded.
    case binary(ByteBuffer)
    /// Input that is no Engine.IO packet: the application may answer it, then the session closes
    /// (the reference server closes on anything it cannot decode).
    case undecodable(reason: String)
    /// The session ended, from either side: nothing more comes.
    case ended(EngineIOCloseReason)
}

/// The application's side of one Engine.IO session (Socket.IO's connection, or an echo).
///
/// Called on the session's event loop, and must not block it: a handler that awaits hands the
/// input to a task of its own, in order.
public protocol EngineIOSessionHandler: AnyObject, Sendable {
    /// Input from the client, or the session's end.
    func received(_ inbound: EngineIOInbound)
    /// The session's deadline (``SocketIOSocket/setDeadline(_:)``) is within
    /// ``EngineIOSettings/deadlineWarning``: a chance to tell the client (to renew a credential).
    func deadlineApproaching(_ deadline: Date)
    /// The deadline passed: whatever the client should be told goes out now; the session closes
    /// right after.
    func deadlineReached()
}

extension EngineIOSessionHandler {
    /// Does nothing.
    public func deadlineApproaching(_ deadline: Date) {}
    /// Does nothing.
    public func deadlineReached() {}
}
