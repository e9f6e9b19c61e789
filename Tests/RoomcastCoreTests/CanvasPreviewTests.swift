import NIOCore
import RoomcastCore
import SocketIO
import Testing

@Suite("CanvasPreview")
struct CanvasPreviewTests {
    let room = RoomID("r1")!
    let element = ElementID("e_1")!
    let user = UserID("u-9")!

    @Test("frames: element:drag {roomId, elementId, userId, positionX, positionY}, cursor:move {roomId, userId, x, y}")
    func frames() throws {
        let drag = try CanvasPreview(room: room, kind: .drag(element), x: 12.5, y: -3)
        #expect(
            String(buffer: drag.frame(from: user))
                == #"42["element:drag",{"roomId":"r1","elementId":"e_1","userId":"u-9","positionX":12.5,"positionY":-3.0}]"#
        )
        let cursor = try CanvasPreview(room: room, kind: .cursor, x: 1e-5, y: 1e7)
        #expect(String(buffer: cursor.frame(from: user)) == #"42["cursor:move",{"roomId":"r1","userId":"u-9","x":1e-05,"y":10000000.0}]"#)
        // Every frame is one valid Socket.IO event.
        for preview in [drag, cursor] {
            let packet = try SocketIOPacket(decoding: preview.frame(from: user).getSlice(at: 1, length: preview.frame(from: user).readableBytes - 1)!)
            #expect(packet.eventName == preview.eventName)
        }
    }

    @Test("coordinates must be finite and within ±1e7, named as the client sent them")
    func coordinates() {
        for (x, y, field) in [(Double.nan, 0.0, "positionX"), (0, .infinity, "positionY"), (1e7 + 1, 0, "positionX"), (0, -2e7, "positionY")] {
            #expect(throws: RoomcastError.self) { try CanvasPreview(room: room, kind: .drag(element), x: x, y: y) }
            do {
                _ = try CanvasPreview(room: room, kind: .drag(element), x: x, y: y)
            } catch {
                #expect(error.code == .invalidPayload && error.message.contains(field), "\(error)")
            }
        }
        do {
            _ = try CanvasPreview(room: room, kind: .cursor, x: 0, y: .nan)
            Issue.record("a NaN cursor was accepted")
        } catch {
            #expect(error.message.hasPrefix("y "), "\(error)")
        }
    }

    @Test("keys: one per dragged element, one for the cursor")
    func keys() throws {
        #expect(try CanvasPreview(room: room, kind: .drag(element), x: 0, y: 0).key == "drag:e_1")
        #expect(try CanvasPreview(room: room, kind: .cursor, x: 0, y: 0).key == "cursor")
    }

    @Test("a volatile envelope '~<socket> <frame>' names its sender and has no offset")
    func volatileEnvelope() throws {
        let frame = try CanvasPreview(room: room, kind: .cursor, x: 1, y: 2).frame(from: user)
        let payload = EventEnvelope.volatilePayload(frame: frame, from: "node1234abcdefABCDEF0123")
        #expect(String(buffer: payload).hasPrefix("~node1234abcdefABCDEF0123 42["))
        let envelope = try #require(EventEnvelope(payload: payload))
        #expect(envelope.volatileSender == "node1234abcdefABCDEF0123")
        #expect(envelope.offset == nil)
        #expect(envelope.frame == frame)
        // Other envelopes name no sender.
        #expect(EventEnvelope(payload: EventEnvelope.payload(frame: frame))?.volatileSender == nil)
    }
}
