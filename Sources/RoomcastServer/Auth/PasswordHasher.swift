import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks passwords with bcrypt, on NIO's blocking thread pool.
///
/// A bcrypt hash takes tens of milliseconds by design (about 2^cost rounds), which would stall
/// every other task sharing a cooperative-pool thread, so both operations run on
/// `NIOThreadPool.singleton`. bcrypt reads at most 72 bytes of a password and stops at a NUL
/// character: longer passwords that share their first 72 bytes verify alike.
struct PasswordHasher: Sendable {
    /// The costs bcrypt accepts (log2 of its rounds).
    static let costRange: ClosedRange<Int> = 4...31
    /// The default cost: tens of milliseconds per hash on current hardware.
    static let defaultCost = 10
    /// The configuration key the cost is read from.
    static let costKey = "auth.bcrypt_cost"

    /// The cost new hashes are made with; existing hashes keep the cost they were made with.
    let cost: Int
    /// A well-formed hash of this cost that no password matches, checked when the user is unknown
    /// so that a login takes as long whether or not the username exists.
    let unknownUserHash: String

    /// Creates a hasher.
    /// - Parameter cost: log2 of bcrypt's rounds, within ``costRange``; check it first with
    ///   ``validate(cost:)``.
    init(cost: Int = defaultCost) {
        precondition(Self.costRange.contains(cost), "bcrypt cost must be in \(Self.costRange)")
        self.cost = cost
        // "$2b$", two cost digits, "$", a 22-character salt and a 31-character digest, all in
        // bcrypt's alphabet: checking it runs every round; `verify` answers false for it anyway.
        let digits = cost < 10 ? "0\(cost)" : "\(cost)"
        self.unknownUserHash = "$2b$\(digits)$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    }

    /// Refuses a cost outside ``costRange``, naming `auth.bcrypt_cost`.
    static func validate(cost: Int) throws(ConfigurationError) {
        guard costRange.contains(cost) else {
            throw ConfigurationError(
                key: costKey,
                reason: "\(cost) is not a whole number in \(costRange.lowerBound)...\(costRange.upperBound)"
            )
        }
    }

    /// Hashes `password` with a fresh random salt: `$2b$<cost>$<salt><digest>`, 60 characters.
    /// - Throws: when the thread pool is shutting down.
    func hash(_ password: String) async throws -> String {
        let cost = UInt8(cost)
        return try await NIOThreadPool.singleton.runIfActive {
            Bcrypt.hash(password, cost: cost)
        }
    }

    /// Whether `password` matches `hash`.
    /// - Parameters:
    ///   - password: the password as typed.
    ///   - hash: the stored hash, or `nil` when the user does not exist: the check then runs
    ///     against ``unknownUserHash``, takes as long as a real one, and answers `false`.
    /// - Returns: `false` as well for a malformed hash.
    /// - Throws: when the thread pool is shutting down.
    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let stored = hash ?? unknownUserHash
        let matches = try await NIOThreadPool.singleton.runIfActive {
            Bcrypt.verify(password, hash: stored)
        }
        return matches && hash != nil
    }
}
