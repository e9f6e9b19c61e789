import RoomcastCore

/// What a push service made of one job.
enum PushDelivery: Sendable, Equatable {
    /// Accepted: the job is done.
    case delivered
    /// The device token is no longer valid (the app was removed, the token expired): remove it.
    /// - Parameter at: when the service says it stopped being valid, epoch milliseconds, if it says.
    case unregistered(at: Int64?)
    /// No answer, or one worth asking again (throttled, a server error): retry after a back-off.
    case retry(String)
    /// Refused in a way that will not change (a malformed message, a wrong sender): dead-letter it.
    case refused(String)
}

/// Sends the jobs of one platform's outbox through that platform's push service; the push
/// worker of that outbox decides, from what it answers, what becomes of the job.
protocol PushSender: Sendable {
    /// The service's name, for logs and dead-letter reasons: `APNs`, `FCM`.
    var service: String { get }

    /// Sends `job` once and says what the service made of it.
    func send(_ job: PushJob) async -> PushDelivery

    /// Closes the service's connections.
    func shutdown() async
}
