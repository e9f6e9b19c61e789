import Logging
import NIOCore
import RoomcastCore
import ServiceLifecycle

/// Delivers push jobs from one platform's outbox through its push service (``PushSender``: APNs
/// for `ios`, FCM for `fcm`). Every node runs one per platform it has credentials for; the
/// outbox's consumer group hands each job to one of them, and a job a worker could not finish (failed send, dead node)
/// is claimed again after a back-off that doubles per attempt, until it succeeds or goes to the
/// dead-letter stream. Delivery is at least once: a node that dies after the service accepted a push
/// but before acknowledging it leaves the job to be sent again.
final class PushWorker: Service, Sendable {
    private let outbox: PushOutbox
    private let tokens: PushTokenStore
    private let sender: any PushSender
    private let settings: PushSettings
    /// A job is never claimed from a worker sooner than this after the worker began its send
    /// (``stillHolds(_:)``), so a send still in flight is not duplicated by another node.
    private let inFlightAllowance: Duration
    private let consumer: String
    private let logger: Logger

    init(
        outbox: PushOutbox, tokens: PushTokenStore, sender: any PushSender, settings: PushSettings, requestTimeout: Duration, consumer: String,
        logger: Logger
    ) {
        self.outbox = outbox
        self.tokens = tokens
        self.sender = sender
        self.settings = settings
        // Twice the request timeout (at least a second more): a busy node may start a send late.
        self.inFlightAllowance = max(requestTimeout * 2, requestTimeout + .seconds(1))
        self.consumer = consumer
        self.logger = logger
    }

    func run() async throws {
        var redisFailing = false
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let jobs: [PushJob]
            do {
                try await outbox.prepare()
                jobs = try await nextJobs()
                if redisFailing {
                    logger.notice("push outbox reachable again")
                    redisFailing = false
                }
            } catch {
                if !redisFailing {
                    logger.warning("cannot read the push outbox; retrying", metadata: ["error": "\(error)"])
                    redisFailing = true
                }
                jobs = []
            }
            guard !jobs.isEmpty else {
                _ = try? await cancelWhenGracefulShutdown { [settings] in try await Task.sleep(for: settings.pollInterval) }
                continue
            }
            // A graceful shutdown waits for the sends under way: each is bounded by the request timeout.
            await withTaskGroup(of: Void.self) { group in
                for job in jobs {
                    group.addTask { await self.deliver(job) }
                }
            }
        }
        try? await outbox.retire(consumer)
        await sender.shutdown()
    }

    /// Overdue retries first, then new jobs, at most a batch in all.
    private func nextJobs() async throws(RoomcastError) -> [PushJob] {
        let retries = try await outbox.claimOverdue(for: consumer, count: settings.batchSize) { deliveries in
            self.waitBeforeRetry(afterDeliveries: deliveries)
        }
        let room = settings.batchSize - retries.count
        guard room > 0 else { return retries }
        return retries + (try await outbox.takeNew(for: consumer, count: room))
    }

    /// `retryDelay` doubled per earlier attempt, capped, and never shorter than a send may take.
    func waitBeforeRetry(afterDeliveries deliveries: Int) -> Duration {
        let doublings = min(max(deliveries - 1, 0), 30)
        let backoff = min(settings.retryDelay * (1 << doublings), settings.maxRetryDelay)
        return max(backoff, inFlightAllowance)
    }

    private func deliver(_ job: PushJob) async {
        // Its worker died during the last allowed attempt.
        guard job.deliveries <= settings.maxAttempts else {
            await finish(job, failure: "no answer from \(sender.service) after \(job.deliveries - 1) attempts")
            return
        }
        guard await stillHolds(job) else { return }
        switch await sender.send(job) {
        case .delivered:
            GatewayMetrics.pushDelivered(jobID: job.id)
            await finish(job, failure: nil)
        case .unregistered(let unregisteredAt):
            // The app was removed or the token expired: stop sending to it.
            do {
                try await tokens.removeUnregistered(job.token, for: job.user, unregisteredAt: unregisteredAt)
            } catch {
                logger.warning("could not remove an unregistered device token", metadata: ["user": "\(job.user)", "error": "\(error)"])
            }
            logger.info("device token unregistered by \(sender.service), removed", metadata: ["user": "\(job.user)"])
            await finish(job, failure: nil, outcome: .unregistered)
        case .retry(let reason):
            await failed(job, reason: reason)
        case .refused(let reason):
            await finish(job, failure: reason)
        }
    }

    /// Whether this worker may send `job` now: it still holds it, and no other node will claim it
    /// before the send has had its time. A node that took longer than the allowance to get here
    /// (busy, paused) finds the job claimed by another and leaves it; one that cannot ask Redis
    /// leaves the job pending for a later claim rather than risk sending it twice.
    private func stillHolds(_ job: PushJob) async -> Bool {
        do {
            if try await outbox.renew(job, for: consumer) { return true }
            logger.debug("push job taken over by another worker before its send", metadata: ["job": "\(job.id)"])
        } catch {
            logger.warning("could not renew a push job before its send; it stays pending", metadata: ["job": "\(job.id)", "error": "\(error)"])
        }
        return false
    }

    /// A failed attempt: the job stays pending for a later claim, or goes to the dead letters when
    /// it was the last allowed.
    private func failed(_ job: PushJob, reason: String) async {
        guard job.deliveries < settings.maxAttempts else {
            await finish(job, failure: "\(reason) (attempt \(job.deliveries) of \(settings.maxAttempts))")
            return
        }
        logger.notice(
            "push attempt failed, will retry",
            metadata: [
                "job": "\(job.id)", "user": "\(job.user)", "platform": "\(outbox.platform)", "attempt": "\(job.deliveries)", "reason": "\(reason)",
            ]
        )
        GatewayMetrics.pushJobs.increment(PushJobOutcome.retried.rawValue)
    }

    /// Ends a job: done (`outcome`), or dead-lettered with `failure`.
    private func finish(_ job: PushJob, failure: String?, outcome: PushJobOutcome = .delivered) async {
        do {
            try await outbox.finish(job, failure: failure)
            GatewayMetrics.pushJobs.increment((failure == nil ? outcome : .deadLettered).rawValue)
            if let failure {
                logger.warning("push job dead-lettered", metadata: ["job": "\(job.id)", "user": "\(job.user)", "reason": "\(failure)"])
            }
        } catch {
            // Still pending: claimed and sent again later (at least once).
            logger.warning("could not finish a push job", metadata: ["job": "\(job.id)", "error": "\(error)"])
        }
    }
}
