extension SocketIOTestSession {
    /// A test call suspended until an item arrives under `key`, it times out, or the connection ends.
    struct Waiter {
        let key: SocketIOTestInbox.Key
        let timeout: Duration
        let continuation: CheckedContinuation<SocketIOTestInbox.Item, any Error>
        let timer: Task<Void, Never>
    }

    /// The oldest item under `key`: a queued one at once, else the next to arrive.
    ///
    /// Items that arrived earlier are returned first, so nothing is lost between calls. The wait
    /// ends with `.timeout` after `timeout`, with the connection's end (`.closed`, or the
    /// recorded protocol violation), or with `CancellationError` when the calling task is cancelled.
    func wait(for key: SocketIOTestInbox.Key, timeout: Duration) async throws -> SocketIOTestInbox.Item {
        if let item = self.inbox.popFirst(key) { return item }
        if key == .close, let closeState = self.closeState {
            return .closed(code: closeState.code, reason: closeState.reason)
        }
        if let error = self.terminalError(for: key) { throw error }
        try Task.checkCancellation()

        let id = self.nextWaiterID
        self.nextWaiterID += 1
        return try await withTaskCancellationHandler {
            // The body runs on this actor before the call suspends, so the waiter is registered
            // before any later `receive` can look for it.
            try await withCheckedThrowingContinuation { continuation in
                let timer = Task {
                    try? await Task.sleep(for: timeout)
                    self.expire(id)
                }
                self.waiters[id] = Waiter(key: key, timeout: timeout, continuation: continuation, timer: timer)
            }
        } onCancel: {
            Task { await self.resume(id, with: .failure(CancellationError())) }
        }
    }

    /// Hands `item` to the longest-waiting call for `key`, or queues it.
    func deliver(_ item: SocketIOTestInbox.Item, to key: SocketIOTestInbox.Key) {
        if let id = self.waiters.filter({ $0.value.key == key }).keys.min() {
            self.resume(id, with: .success(item))
        } else {
            self.inbox.append(item, for: key)
        }
    }

    /// Records a protocol violation: it fails every wait from now on (except for the close).
    func fail(_ error: SocketIOTestError) {
        if self.failure == nil { self.failure = error }
        self.failWaiters(with: self.failure ?? error) { $0 != .close }
    }

    /// Fails the waits whose key matches.
    func failWaiters(with error: SocketIOTestError, where matches: (SocketIOTestInbox.Key) -> Bool) {
        for (id, waiter) in self.waiters where matches(waiter.key) {
            self.resume(id, with: .failure(error))
        }
    }

    /// After the WebSocket ended: close waits get the close code, all others fail.
    func settleWaitersAfterClose() {
        guard let closeState = self.closeState else { return }
        for (id, waiter) in self.waiters {
            if waiter.key == .close {
                self.resume(id, with: .success(.closed(code: closeState.code, reason: closeState.reason)))
            } else if let error = self.terminalError(for: waiter.key) {
                self.resume(id, with: .failure(error))
            }
        }
    }

    /// Why nothing more can arrive under `key`, if that is already known.
    private func terminalError(for key: SocketIOTestInbox.Key) -> SocketIOTestError? {
        if key == .close { return nil }
        if let failure = self.failure { return failure }
        if let closeState = self.closeState {
            guard self.handshakeReceived else {
                let detail = closeState.reason ?? "closed with code \(closeState.code.map(String.init) ?? "none")"
                return .connectionFailed(reason: "\(detail) before the Engine.IO open packet")
            }
            return .closed(code: closeState.code, reason: closeState.reason)
        }
        switch key {
        case .event, .ack: return self.disconnectedByServer ? .disconnected : nil
        default: return nil
        }
    }

    private func expire(_ id: UInt64) {
        guard let waiter = self.waiters[id] else { return }
        let error = SocketIOTestError.timeout(
            awaiting: waiter.key.description,
            after: waiter.timeout,
            recentFrames: self.inbox.recentFrames
        )
        self.resume(id, with: .failure(error))
    }

    private func resume(_ id: UInt64, with result: Result<SocketIOTestInbox.Item, any Error>) {
        guard let waiter = self.waiters.removeValue(forKey: id) else { return }
        waiter.timer.cancel()
        waiter.continuation.resume(with: result)
    }
}
