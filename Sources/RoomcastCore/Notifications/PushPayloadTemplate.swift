import NIOCore

/// A notification's APNs payload, split around `aps.badge`: the badge is the unread count after
/// the notification, which only the script that stores it knows, so the JSON is encoded before
/// the script runs and the number spliced in after.
///
///     {"aps":{"alert":{"title":…,"body":…},"sound":"default","badge":<N>},"type":…,"notificationId":…,…}
struct PushPayloadTemplate {
    /// APNs refuses larger payloads.
    static let maximumSize = 4096

    /// The JSON before the badge.
    var prefix: String
    /// The JSON after the badge.
    var suffix: String

    /// Builds the template of `notification`'s push.
    /// - Throws: `invalid_payload` when the payload would exceed ``maximumSize``.
    init(for notification: AppNotification) throws(RoomcastError) {
        let head = Head(alert: Alert(title: notification.title, body: notification.body))
        let fields = Fields(
            type: notification.type, notificationId: notification.id, roomId: notification.roomId,
            elementId: notification.elementId, actorId: notification.actor?.id
        )
        let encoded: (head: String, fields: String, data: String?)
        do {
            encoded = (
                String(buffer: try JSONCoding.encode(head)), String(buffer: try JSONCoding.encode(fields)),
                try notification.data.map { String(buffer: try JSONCoding.encode($0)) }
            )
        } catch {
            throw RoomcastError(.internalError, "could not encode the push payload")
        }
        // `{"alert":{…}}` → `{"aps":{"alert":{…},"sound":"default","badge":`
        prefix = #"{"aps":"# + encoded.head.dropLast() + #","sound":"default","badge":"#
        var members = encoded.fields.dropFirst().dropLast()
        if let data = encoded.data, data.count > 2 {
            members += "," + data.dropFirst().dropLast()
        }
        suffix = "}," + members + "}"
        // The badge takes at most 10 digits.
        guard prefix.utf8.count + suffix.utf8.count + 10 <= Self.maximumSize else {
            throw RoomcastError(.invalidPayload, "title, body and data are too long for a push notification (4 KB in all)")
        }
    }

    /// The payload with `badge` spliced in.
    func payload(badge: Int) -> String { prefix + String(badge) + suffix }

    private struct Head: Encodable {
        var alert: Alert
    }

    /// `{"title", "body"}`: APNs's `aps.alert`, FCM's `notification`.
    struct Alert: Encodable {
        var title: String
        var body: String
    }

    /// The app's fields beside `aps`: what the app needs to open the right screen.
    private struct Fields: Encodable {
        var type: String
        var notificationId: NotificationID
        var roomId: RoomID?
        var elementId: ElementID?
        var actorId: UserID?
    }
}
