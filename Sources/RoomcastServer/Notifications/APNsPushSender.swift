import APNs
import RoomcastCore

/// Sends `ios` jobs through APNs: the job's payload as is, collapsed per notification.
struct APNsPushSender: PushSender {
    let client: APNsClient

    var service: String { "APNs" }

    func send(_ job: PushJob) async -> PushDelivery {
        let request = APNsRequest(deviceToken: job.token, payload: job.payload, collapseID: job.notification.isEmpty ? nil : job.notification)
        let response: APNsResponse
        do {
            response = try await client.send(request)
        } catch {
            return .retry("\(error)")
        }
        let description = "status \(response.status)" + (response.reason.map { " \($0)" } ?? "")
        switch response.status {
        case 200: return .delivered
        case 410: return .unregistered(at: response.timestamp.map(Int64.init))
        case 429, 500...: return .retry(description)
        // A request APNs refuses (bad token, bad topic, payload too large) fails the same way every time.
        default: return .refused("refused by APNs: " + description)
        }
    }

    func shutdown() async {
        await client.shutdown()
    }
}
