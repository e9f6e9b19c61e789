import RoomcastCore

extension SocketEvents {
    /// The volatile canvas events: relayed through pub/sub only, on a budget of their own.
    static let previewEvents: Set<String> = ["element:drag", "cursor:move"]

    /// `{roomId, elementId, positionX, positionY}`: where an element is being dragged.
    struct DragRequest: Decodable, Sendable {
        var roomId: RoomID
        var elementId: ElementID
        var positionX: Double
        var positionY: Double
    }

    /// `{roomId, x, y}`: where the user's pointer is on the canvas.
    struct CursorRequest: Decodable, Sendable {
        var roomId: RoomID
        var x: Double
        var y: Double
    }

    static func registerPreviewEvents(on router: inout SocketEventRouter) {
        router.on("element:drag", DragRequest.self) { state, request in
            try await state.preview(
                CanvasPreview(room: request.roomId, kind: .drag(request.elementId), x: request.positionX, y: request.positionY)
            )
            return RoomResult(roomId: request.roomId)
        }
        router.on("cursor:move", CursorRequest.self) { state, request in
            try await state.preview(CanvasPreview(room: request.roomId, kind: .cursor, x: request.x, y: request.y))
            return RoomResult(roomId: request.roomId)
        }
    }
}
