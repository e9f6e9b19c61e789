public import NIOCore
import SocketIO

/// A volatile canvas preview: where an element is being dragged to, or where a user's cursor is.
///
/// Previews go to the room's other sockets through pub/sub only: no script, no stream entry, no
/// offset. A late joiner never sees one (it gets the persisted state), a client that misses one
/// gets the next; the drop is persisted by `element:update`.
public struct CanvasPreview: Sendable, Hashable {
    /// What is previewed.
    public enum Kind: Sendable, Hashable {
        /// `element:drag`: an element on its way to a position.
        case drag(ElementID)
        /// `cursor:move`: the user's pointer.
        case cursor
    }

    /// The room it is shown in.
    public var room: RoomID
    public var kind: Kind
    public var x: Double
    public var y: Double

    /// Coordinates accepted, as for element positions (finite, within ±1e7).
    public static let coordinates: ClosedRange<Double> = -1e7...1e7

    /// A preview at `(x, y)`.
    /// - Throws: `invalid_payload` for a coordinate that is not finite or out of range.
    public init(room: RoomID, kind: Kind, x: Double, y: Double) throws(RoomcastError) {
        let (xName, yName) = kind == .cursor ? ("x", "y") : ("positionX", "positionY")
        for (name, value) in [(xName, x), (yName, y)] where !(value.isFinite && Self.coordinates.contains(value)) {
            throw RoomcastError(.invalidPayload, "\(name) must be a finite number in -1e7...1e7")
        }
        self.room = room
        self.kind = kind
        self.x = x
        self.y = y
    }

    /// The client event it travels as, in both directions.
    public var eventName: String {
        switch kind {
        case .drag: ServerEvent.elementDrag.rawValue
        case .cursor: ServerEvent.cursorMove.rawValue
        }
    }

    /// Previews with the same key replace each other when coalesced: one per dragged element,
    /// one cursor.
    public var key: String {
        switch kind {
        case .drag(let element): "drag:\(element)"
        case .cursor: "cursor"
        }
    }

    /// The frame the room's other sockets get: `element:drag {roomId, elementId, userId,
    /// positionX, positionY}` or `cursor:move {roomId, userId, x, y}`. Written by hand (ids are
    /// `[A-Za-z0-9_-]`, numbers finite): no encoder on a path taken up to 30 times a second.
    public func frame(from user: UserID) -> ByteBuffer {
        var json = #"{"roomId":""# + room.rawValue
        switch kind {
        case .drag(let element):
            json += #"","elementId":""# + element.rawValue + #"","userId":""# + user.rawValue
            json += #"","positionX":"# + x.description + #","positionY":"# + y.description + "}"
        case .cursor:
            json += #"","userId":""# + user.rawValue + #"","x":"# + x.description + #","y":"# + y.description + "}"
        }
        return SocketIOFrame.event(name: eventName, payload: ByteBuffer(string: json))
    }
}
