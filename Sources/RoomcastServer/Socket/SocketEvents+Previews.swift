import NIOCore
import RoomcastCore
import SocketIO

extension SocketEvents {
    /// The volatile canvas events: relayed through pub/sub only, on a budget of their own.
    static let previewEvents: Set<String> = [ServerEvent.elementDrag.rawValue, ServerEvent.cursorMove.rawValue]

    /// `{roomId, elementId, positionX, positionY}`: where an element is being dragged.
    struct DragRequest: FlatPayload, RoomScopedRequest {
        var roomId: RoomID
        var elementId: ElementID
        var positionX: Double
        var positionY: Double

        init(reading object: JSONObjectReader) throws(RoomcastError) {
            roomId = try object.identifier("roomId")
            elementId = try object.identifier("elementId")
            positionX = try object.requiredNumber("positionX")
            positionY = try object.requiredNumber("positionY")
        }
    }

    /// `{roomId, x, y}`: where the user's pointer is on the canvas.
    struct CursorRequest: FlatPayload, RoomScopedRequest {
        var roomId: RoomID
        var x: Double
        var y: Double

        init(reading object: JSONObjectReader) throws(RoomcastError) {
            roomId = try object.identifier("roomId")
            x = try object.requiredNumber("x")
            y = try object.requiredNumber("y")
        }
    }

    /// Sent up to 4 × `canvas.preview_hz` times a second per socket: read without `JSONDecoder`,
    /// acknowledged without `JSONEncoder` (`{roomId}`; ids need no escaping).
    static func registerPreviewEvents(on router: inout SocketEventRouter) {
        router.on(ServerEvent.elementDrag.rawValue, flat: DragRequest.self, json: { state, request in
            try await state.preview(
                CanvasPreview(room: request.roomId, kind: .drag(request.elementId), x: request.positionX, y: request.positionY)
            )
            return roomResult(request.roomId)
        })
        router.on(ServerEvent.cursorMove.rawValue, flat: CursorRequest.self, json: { state, request in
            try await state.preview(CanvasPreview(room: request.roomId, kind: .cursor, x: request.x, y: request.y))
            return roomResult(request.roomId)
        })
    }

    /// `{"roomId":"<id>"}`.
    static func roomResult(_ room: RoomID) -> ByteBuffer {
        ByteBuffer(string: #"{"roomId":""# + room.rawValue + #""}"#)
    }
}
