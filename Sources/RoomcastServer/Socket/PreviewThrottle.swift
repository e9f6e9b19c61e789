/// Coalesces one socket's canvas previews to at most one per `interval` per key (an element
/// being dragged, the cursor): the first goes out at once; one that comes sooner waits for the
/// end of the interval, and a newer one replaces it while it waits, so the last position always
/// goes out and nothing older follows it.
///
/// A value under its owner's lock, given the time by its caller so tests need no clock.
struct PreviewThrottle<Preview> {
    /// What to do with an offered preview.
    enum Decision: Equatable {
        /// Send it now.
        case sendNow
        /// Keep it; call ``takeDue(_:now:)`` for its key at this instant.
        case sendAt(ContinuousClock.Instant)
        /// It replaced one already waiting: nothing more to schedule.
        case replaced
        /// The socket has too many keys in flight: dropped.
        case dropped
    }

    /// Shortest time between two sends of one key (1 / `canvas.preview_hz`).
    let interval: Duration
    /// Keys remembered at once, so a socket dragging ever new ids holds bounded memory.
    let maxKeys: Int
    private var lastSent: [String: ContinuousClock.Instant] = [:]
    private var waiting: [String: Preview] = [:]

    init(interval: Duration, maxKeys: Int = 32) {
        self.interval = interval
        self.maxKeys = maxKeys
    }

    /// Offers the newest preview of `key`.
    mutating func offer(_ preview: Preview, key: String, now: ContinuousClock.Instant) -> Decision {
        if waiting[key] != nil {
            waiting[key] = preview
            return .replaced
        }
        if let last = lastSent[key], now < last + interval {
            waiting[key] = preview
            return .sendAt(last + interval)
        }
        if lastSent[key] == nil, lastSent.count >= maxKeys {
            forgetIdle(now: now)
            guard lastSent.count < maxKeys else { return .dropped }
        }
        lastSent[key] = now
        return .sendNow
    }

    /// The preview of `key` that waited for `now`, if any (it counts as sent now).
    mutating func takeDue(_ key: String, now: ContinuousClock.Instant) -> Preview? {
        guard let preview = waiting.removeValue(forKey: key) else { return nil }
        lastSent[key] = now
        return preview
    }

    /// Keys held now (for tests).
    var keyCount: Int { lastSent.count }

    /// Forgets keys whose interval is over and which have nothing waiting.
    private mutating func forgetIdle(now: ContinuousClock.Instant) {
        lastSent = lastSent.filter { key, last in waiting[key] != nil || now < last + interval }
    }
}
