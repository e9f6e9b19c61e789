import Foundation

/// The provider token in use, shared by every send.
///
/// Apple refuses tokens refreshed more often than every 20 minutes and tokens older than 60, so
/// one token serves 50 minutes, and a token APNs calls expired is replaced once, not once per
/// request that saw it rejected.
actor APNsTokenCache {
    private let signingKey: APNsSigningKey
    private let keyID: String
    private let teamID: String
    private let lifetime: TimeInterval
    private let now: @Sendable () -> Date
    private var current: (token: String, issuedAt: Date)?

    init(
        signingKey: APNsSigningKey,
        keyID: String,
        teamID: String,
        lifetime: Duration = .seconds(50 * 60),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.signingKey = signingKey
        self.keyID = keyID
        self.teamID = teamID
        self.lifetime = TimeInterval(lifetime.components.seconds)
        self.now = now
    }

    /// The current token, signing a new one when there is none or it has served its lifetime.
    func token() -> String {
        let date = now()
        if let current, date.timeIntervalSince(current.issuedAt) < lifetime {
            return current.token
        }
        return issue(at: date)
    }

    /// A token to replace `rejected`; when another request already replaced it, that new one.
    func renew(replacing rejected: String) -> String {
        if let current, current.token != rejected {
            return current.token
        }
        return issue(at: now())
    }

    private func issue(at date: Date) -> String {
        let token = signingKey.providerToken(keyID: keyID, teamID: teamID, issuedAt: Int(date.timeIntervalSince1970))
        current = (token, date)
        return token
    }
}
