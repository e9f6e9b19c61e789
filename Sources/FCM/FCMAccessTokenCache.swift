import Foundation
import NIOCore
import PushHTTP2

/// The OAuth access token in use, shared by every send.
///
/// A token is kept until shortly before Google says it expires (five minutes, or half its life
/// when that is shorter), then exchanged again. One exchange runs at a time: sends that find no
/// valid token wait for the exchange under way instead of starting their own, and a token FCM
/// rejects is replaced once, not once per request that saw it rejected.
actor FCMAccessTokenCache {
    /// Exchanges a fresh assertion for a token and says how long Google lets it live.
    typealias Exchange = @Sendable (_ deadline: NIODeadline) async throws(FCMError) -> (token: String, lifetime: Duration)

    private let exchange: Exchange
    private let now: @Sendable () -> Date
    private var current: (token: String, renewAt: Date)?
    private var pending: Task<(token: String, renewAt: Date), any Error>?

    init(now: @escaping @Sendable () -> Date = { Date() }, exchange: @escaping Exchange) {
        self.exchange = exchange
        self.now = now
    }

    /// The current token, exchanging one when there is none or it is about to expire.
    func token(deadline: NIODeadline) async throws(FCMError) -> String {
        if let current, now() < current.renewAt {
            return current.token
        }
        return try await renewed(deadline: deadline)
    }

    /// A token to replace `rejected`; when another request already replaced it, that new one.
    func renew(replacing rejected: String, deadline: NIODeadline) async throws(FCMError) -> String {
        if let current, current.token != rejected {
            return current.token
        }
        current = nil
        return try await renewed(deadline: deadline)
    }

    private func renewed(deadline: NIODeadline) async throws(FCMError) -> String {
        let task: Task<(token: String, renewAt: Date), any Error>
        if let pending {
            task = pending
        } else {
            let exchange = exchange
            let now = now
            task = Task {
                let issuedAt = now()
                let (token, lifetime) = try await exchange(deadline)
                let seconds = Double(lifetime.components.seconds)
                return (token, issuedAt.addingTimeInterval(max(seconds - 300, seconds / 2)))
            }
            pending = task
        }
        do {
            let fresh = try await task.value
            if pending == task {
                pending = nil
                current = fresh
            }
            return fresh.token
        } catch {
            if pending == task { pending = nil }
            throw error as? FCMError ?? FCMError.authenticationFailed.with("the token exchange failed", underlying: error)
        }
    }
}
