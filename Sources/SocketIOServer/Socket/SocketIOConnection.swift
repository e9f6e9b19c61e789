public import NIOCore
import NIOWebSocket
import SocketIO
import Synchronization
import WebSocketServer

/// The Socket.IO side of one Engine.IO session: packets decoded, binary attachments put back
/// with their packet, namespaces joined and left, and each packet handed to the application's
/// handler in order, by a task that runs only while there are packets (an idle connection has no
/// task at all).
///
/// What cannot be decoded closes the connection (1002), as in the reference server (socket.io
/// `lib/client.ts` `onerror`, engine.io `lib/socket.ts`): a packet of an unknown type, data that
/// is not what its type needs, a bad ack id, a binary frame that no binary packet announced,
/// text where an attachment was due.
final class SocketIOConnection: EngineIOSessionHandler {
    /// What the connection's task handles next.
    private enum Inbound {
        case packet(ByteBuffer)
        case binary(ByteBuffer)
        case undecodable(String)
        case ended
    }

    /// Packets waiting, what they weigh, and whether a task is handling them.
    private struct Inbox {
        var pending: [Inbound] = []
        var budget: OutboundBudget
        var isHandling = false
        var ended = false
    }

    /// What only the connection's task touches: one task runs at a time, and the next starts only
    /// after the last found the inbox empty, under its lock.
    private final class TaskState: @unchecked Sendable {
        /// The namespaces connected (most clients use one).
        var namespaces = InlineSet<String>()
        /// A binary packet whose attachments are still coming (boxed: most connections never
        /// see one, and a packet held inline would be memory per idle connection).
        var pendingBinary: PendingBinary?
        var isClosed = false
    }

    /// A binary packet and the attachments that came so far.
    private final class PendingBinary: @unchecked Sendable {
        let packet: SocketIOPacket
        var attachments: [ByteBuffer] = []

        init(_ packet: SocketIOPacket) {
            self.packet = packet
        }
    }

    let session: SocketSession
    /// The application and settings, shared by every connection of the server.
    private let server: SocketIOOverEngineIO
    private let handler: any SocketIOHandler
    private let inbox: Mutex<Inbox>
    private let taskState = TaskState()

    init(session: SocketSession, opening: EngineIOOpening, server: SocketIOOverEngineIO) {
        self.session = session
        self.server = server
        self.inbox = Mutex(Inbox(budget: OutboundBudget(limit: server.settings.inboundQueueBytes)))
        self.handler = server.application.handler(for: session, opening: opening)
    }

    // MARK: Engine.IO

    func received(_ inbound: EngineIOInbound) {
        switch inbound {
        case .message(let body): enqueue(.packet(body))
        case .binary(let data): enqueue(.binary(data))
        case .undecodable(let reason): enqueue(.undecodable(reason))
        case .ended: enqueue(.ended)
        }
    }

    func credentialExpiring(at seconds: Int64) {
        handler.credentialExpiring(at: seconds)
    }

    func credentialExpired() {
        handler.credentialExpired()
    }

    /// Queues input (or the end) for the connection's task, starting it if it is not running.
    private func enqueue(_ item: Inbound) {
        let start = inbox.withLock { inbox -> Bool in
            guard !inbox.ended else { return false }
            switch item {
            case .ended:
                // Always taken, full inbox or not: it is what tells the handler.
                inbox.ended = true
            case .packet(let bytes), .binary(let bytes):
                guard inbox.budget.take(bytes) else {
                    session.close(.policyViolation, reason: "too many packets waiting: wait for acks before sending more")
                    return false
                }
            case .undecodable:
                guard inbox.budget.take(ByteBuffer()) else { return false }
            }
            inbox.pending.append(item)
            guard !inbox.isHandling else { return false }
            inbox.isHandling = true
            return true
        }
        if start {
            Task { await self.handlePending() }
        }
    }

    private func nextPending() -> Inbound? {
        inbox.withLock { inbox in
            guard !inbox.pending.isEmpty else {
                inbox.isHandling = false
                // Give the storage back: most sockets idle between bursts (memory per socket).
                inbox.pending = []
                return nil
            }
            let item = inbox.pending.removeFirst()
            switch item {
            case .packet(let bytes), .binary(let bytes): inbox.budget.give(back: bytes)
            case .undecodable: inbox.budget.give(back: ByteBuffer())
            case .ended: break
            }
            return item
        }
    }

    /// Handles input until none is left; one such task runs at a time.
    private func handlePending() async {
        let state = taskState
        while let item = nextPending() {
            switch item {
            case .ended:
                state.pendingBinary = nil
                await handler.closed()
            case _ where state.isClosed:
                // Closed for bad input: what was already queued behind it is not handled.
                continue
            case .packet(let body):
                await handlePacket(body, state: state)
            case .binary(let data):
                guard let pending = state.pendingBinary else {
                    await closeUndecodable("binary data outside a binary packet", state: state)
                    continue
                }
                pending.attachments.append(data)
                if pending.attachments.count == pending.packet.attachments {
                    state.pendingBinary = nil
                    await dispatch(pending.packet, attachments: pending.attachments, state: state)
                }
            case .undecodable(let reason):
                await closeUndecodable(reason, state: state)
            }
        }
    }

    private func handlePacket(_ body: ByteBuffer, state: TaskState) async {
        guard state.pendingBinary == nil else {
            return await closeUndecodable("a text packet where a binary attachment was due", state: state)
        }
        let packet: SocketIOPacket
        do {
            packet = try SocketIOPacket(decoding: body)
        } catch {
            return await closeUndecodable(error.message, state: state)
        }
        switch packet.attachments {
        case .some(let count) where count > server.settings.maxAttachments:
            await closeUndecodable("\(count) attachments: at most \(server.settings.maxAttachments)", state: state)
        case .some(let count) where count > 0:
            state.pendingBinary = PendingBinary(packet)
        case .some:
            await dispatch(packet, attachments: [], state: state)
        case .none:
            await dispatch(packet, attachments: nil, state: state)
        }
    }

    private func dispatch(_ packet: SocketIOPacket, attachments: [ByteBuffer]?, state: TaskState) async {
        let namespace = packet.namespace
        switch packet.kind {
        case .connect:
            guard server.application.serves(namespace: namespace) else {
                // Exactly the reference server's refusal (socket.io `lib/client.ts`).
                session.send(SocketIOFrame.connectError(message: "Invalid namespace", namespace: namespace))
                return await handler.refused(namespace: namespace)
            }
            if await handler.connect(namespace: namespace, auth: packet.data) {
                state.namespaces.insert(namespace)
                session.hasConnected.store(true, ordering: .relaxed)
            } else {
                state.namespaces.remove(namespace)
            }
        case .disconnect:
            guard state.namespaces.remove(namespace) != nil else { return }
            await handler.disconnect(namespace: namespace)
        case .event:
            // Socket.IO servers ignore events for a namespace the socket has not connected to.
            guard state.namespaces.contains(namespace), let name = packet.eventName else { return }
            await handler.event(SocketIOEvent(namespace: namespace, name: name, arguments: packet.arguments, attachments: attachments, ackId: packet.ackId))
        case .ack:
            guard state.namespaces.contains(namespace), let id = packet.ackId else { return }
            await handler.ack(SocketIOAck(namespace: namespace, id: id, arguments: packet.arguments, attachments: attachments))
        case .connectError:
            break
        }
    }

    private func closeUndecodable(_ reason: String, state: TaskState) async {
        state.isClosed = true
        state.pendingBinary = nil
        session.close(.protocolError, reason: reason)
        await handler.undecodable(reason)
    }
}

extension SocketSession {
    /// Sends a Socket.IO packet and the binary attachments its placeholders stand for (a
    /// BINARY_EVENT or BINARY_ACK built with `attachments:`), in order.
    public func send(_ packet: ByteBuffer, attachments: [ByteBuffer]) {
        send([OutboundFrame(packet: packet)] + attachments.map(OutboundFrame.init(binary:)))
    }
}
