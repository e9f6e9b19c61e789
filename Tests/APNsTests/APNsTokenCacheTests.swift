@testable import APNs
import Foundation
import RoomcastTestSupport
import Synchronization
import Testing

@Suite("Provider token lifetime")
struct APNsTokenCacheTests {
    /// A wall clock the test moves by hand.
    final class ManualClock: Sendable {
        private let date = Mutex(Date(timeIntervalSince1970: 1_750_000_000))
        var now: Date { date.withLock { $0 } }
        func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
    }

    let key = APNsTestKey.generate()

    func cache(clock: ManualClock) throws -> APNsTokenCache {
        APNsTokenCache(signingKey: try APNsSigningKey(pem: key.pem), keyID: "KID", teamID: "TEAM", now: { clock.now })
    }

    @Test("a token serves 50 minutes, then a new one is issued with the new iat")
    func renewsAfterFiftyMinutes() async throws {
        let clock = ManualClock()
        let cache = try cache(clock: clock)
        let first = await cache.token()
        #expect(try key.verify(bearer: "bearer \(first)", keyID: "KID", teamID: "TEAM").iat == 1_750_000_000)
        clock.advance(by: 49 * 60 + 59)
        #expect(await cache.token() == first)
        clock.advance(by: 1)
        let second = await cache.token()
        #expect(second != first)
        #expect(try key.verify(bearer: "bearer \(second)", keyID: "KID", teamID: "TEAM").iat == 1_750_000_000 + 50 * 60)
    }

    @Test("renewing a rejected token happens once, however many requests saw it rejected")
    func renewsOnce() async throws {
        let cache = try cache(clock: ManualClock())
        let rejected = await cache.token()
        let renewed = await cache.renew(replacing: rejected)
        #expect(renewed != rejected)
        #expect(await cache.renew(replacing: rejected) == renewed)
        #expect(await cache.token() == renewed)
    }
}
