import FCM
import RoomcastCore

/// Sends `fcm` jobs through FCM's HTTP v1 API: the job's payload is the whole `messages:send` body.
struct FCMPushSender: PushSender {
    let client: FCMClient

    var service: String { "FCM" }

    func send(_ job: PushJob) async -> PushDelivery {
        let response: FCMResponse
        do {
            response = try await client.send(FCMRequest(body: job.payload))
        } catch {
            return .retry("\(error)")
        }
        let description = "status \(response.status)" + [response.errorStatus, response.errorCode].compactMap { $0.map { " \($0)" } }.joined()
        if response.status == 200 { return .delivered }
        // 404 NOT_FOUND, or UNREGISTERED with any status (a 400 among them).
        if response.isUnregistered { return .unregistered(at: nil) }
        switch response.status {
        // A 401 the client's one renewal did not cure: the credentials may come back (a clock put right).
        case 401, 429, 500...: return .retry(description)
        // INVALID_ARGUMENT, SENDER_ID_MISMATCH, a wrong project: the same answer every time.
        default: return .refused("refused by FCM: " + description + (response.message.map { ": \($0)" } ?? ""))
        }
    }

    func shutdown() async {
        await client.shutdown()
    }
}
