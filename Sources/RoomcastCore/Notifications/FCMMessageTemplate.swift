import NIOCore

/// A notification's FCM `messages:send` body, split around the device token and the badge: the
/// badge (`apns.payload.aps.badge`, which FCM hands to APNs for iOS devices) is the unread count
/// after the notification, known only once the script that stores it has run.
///
///     {"message":{"token":…,"notification":{"title":…,"body":…},
///      "data":{"type":…,"notificationId":…,…},"apns":{"payload":{"aps":{"sound":"default","badge":<N>}}}}}
///
/// `data` holds strings only, as FCM requires: the same fields as the APNs payload beside `aps`.
struct FCMMessageTemplate {
    /// FCM refuses messages whose notification and data are larger, in bytes.
    static let maximumSize = 4096

    /// The JSON between the token and the badge.
    private var middle: String
    private static let prefix = #"{"message":{"token":"#
    private static let suffix = "}}}}}"

    /// Builds the template of `notification`'s message.
    /// - Throws: `invalid_payload` when the message would exceed ``maximumSize``.
    init(for notification: AppNotification) throws(RoomcastError) {
        var data = notification.data ?? [:]
        data["type"] = notification.type
        data["notificationId"] = notification.id.rawValue
        data["roomId"] = notification.roomId?.rawValue
        data["elementId"] = notification.elementId?.rawValue
        data["actorId"] = notification.actor?.id.rawValue
        let encoded: String
        do {
            let message = Message(notification: PushPayloadTemplate.Alert(title: notification.title, body: notification.body), data: data)
            encoded = String(buffer: try JSONCoding.encode(message))
        } catch {
            throw RoomcastError(.internalError, "could not encode the push message")
        }
        // `{"notification":{…},"data":{…}}` → `,"notification":{…},"data":{…},"apns":{"payload":{"aps":{…,"badge":`
        middle = "," + encoded.dropFirst().dropLast() + #","apns":{"payload":{"aps":{"sound":"default","badge":"#
        // FCM's limit is on what the app receives (notification and data), not on the envelope.
        guard encoded.utf8.count <= Self.maximumSize else {
            throw RoomcastError(.invalidPayload, "title, body and data are too long for a push notification (4 KB in all)")
        }
    }

    /// The body for the device `token`, with `badge` spliced in.
    func body(token: String, badge: Int) -> String {
        // Registration tokens are letters, digits and `-_:.` (see ``PushToken``): nothing to escape.
        Self.prefix + "\"" + token + "\"" + middle + String(badge) + Self.suffix
    }

    private struct Message: Encodable {
        var notification: PushPayloadTemplate.Alert
        var data: [String: String]
    }
}
