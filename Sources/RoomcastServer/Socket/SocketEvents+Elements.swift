import NIOCore
import RoomcastCore

extension SocketEvents {
    /// `{roomId, element, requestId?}`: a retry with the same `requestId` returns the first element.
    struct CreateElementRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var element: ElementDraft
        var requestId: RequestID?
    }

    struct UpdateElementRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var elementId: ElementID
        var updates: ElementChanges
    }

    /// `{roomId, elementId, scaleX?, scaleY?, rotation?, width?, height?, positionX?, positionY?}`
    struct TransformElementRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var elementId: ElementID
        var fields: ElementFields

        private enum CodingKeys: String, CodingKey { case roomId, elementId }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            roomId = try container.decode(RoomID.self, forKey: .roomId)
            elementId = try container.decode(ElementID.self, forKey: .elementId)
            fields = try ElementFields(from: decoder, allowed: ElementFields.transformFields, ignoring: ["roomId", "elementId"])
        }
    }

    struct ElementRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var elementId: ElementID
    }

    /// `{roomId, elementId, requestId?}`: a retry with the same `requestId` toggles nothing and
    /// gets the first answer.
    struct ToggleRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var elementId: ElementID
        var requestId: RequestID?
    }

    /// `{"element": <json>}` around an element's JSON as the script wrote it.
    static func elementResult(_ element: ByteBuffer) -> ByteBuffer {
        var result = ByteBuffer(string: #"{"element":"#)
        result.reserveCapacity(minimumWritableBytes: element.readableBytes + 1)
        result.writeImmutableBuffer(element)
        result.writeString("}")
        return result
    }

    /// `{roomId, elementId, updates, offset}`: an update's ack, the payload of the room's
    /// `element:updated` for the same change. Ids are validated identifiers: nothing to escape.
    static func updatedResult(_ request: UpdateElementRequest, _ applied: ElementStore.AppliedUpdate) -> ByteBuffer {
        var result = ByteBuffer(string: #"{"roomId":""#)
        result.reserveCapacity(minimumWritableBytes: applied.updates.readableBytes + 64)
        result.writeString(request.roomId.rawValue)
        result.writeString(#"","elementId":""#)
        result.writeString(request.elementId.rawValue)
        result.writeString(#"","updates":"#)
        result.writeImmutableBuffer(applied.updates)
        result.writeString(#","offset":""#)
        result.writeString(applied.offset)
        result.writeString(#""}"#)
        return result
    }

    struct ZIndexResult: Encodable, Sendable {
        var elementId: ElementID
        var zIndex: Int
    }
    struct ElementIDResult: Encodable, Sendable { var elementId: ElementID }

    /// The canvas events.
    static func registerElementEvents(on router: inout SocketEventRouter) {
        router.on("element:create", CreateElementRequest.self, json: { state, request in
            elementResult(try await state.changes.createElementJSON(
                request.element, by: state.connectedUser, in: request.roomId, requestId: request.requestId
            ))
        })
        // Moves come many a second while dragging: their acks say only what changed, exactly as
        // the room's `element:updated` does, from the script's own text.
        router.on("element:update", UpdateElementRequest.self, json: { state, request in
            let applied = try await state.changes.updateElement(request.elementId, with: request.updates, by: state.connectedUser.id, in: request.roomId)
            return updatedResult(request, applied)
        })
        router.on("element:transform", TransformElementRequest.self, json: { state, request in
            elementResult(try await state.changes.transformElementJSON(request.elementId, with: request.fields, by: state.connectedUser.id, in: request.roomId))
        })
        router.on("element:bring-to-front", ElementRequest.self) { state, request in
            let zIndex = try await state.changes.bringElementToFront(request.elementId, by: state.connectedUser.id, in: request.roomId)
            return ZIndexResult(elementId: request.elementId, zIndex: zIndex)
        }
        router.on("element:delete", ElementRequest.self) { state, request in
            try await state.changes.deleteElement(request.elementId, by: state.connectedUser.id, in: request.roomId)
            return ElementIDResult(elementId: request.elementId)
        }
        router.on("element:reaction:toggle", ToggleRequest.self) { state, request in
            try await state.changes.toggleReaction(
                on: request.elementId, by: state.connectedUser, in: request.roomId, requestId: request.requestId
            )
        }
        router.on("room:clear", RoomRequest.self) { state, request in
            try await state.changes.clearRoom(request.roomId, by: state.connectedUser.id)
            return RoomResult(roomId: request.roomId)
        }
    }
}
