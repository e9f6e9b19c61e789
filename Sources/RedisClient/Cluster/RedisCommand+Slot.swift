import NIOCore

extension RedisCommand {
    /// The hash slot this command must run in: `nil` for a command without keys, a
    /// ``RedisError/Code/crossSlot`` error when its keys hash to more than one slot.
    ///
    /// The keys are the ones the command declares (`keys:`); a command that declares none has
    /// them found by the position rules of ``RedisCommandKeys`` (`GET key`, `DEL key ...`,
    /// `EVALSHA sha numkeys key ...`, `XGROUP CREATE key ...`), so every command routes correctly
    /// whether or not its caller thought of the cluster.
    func slot() throws(RedisError) -> HashSlot? {
        var found: HashSlot?
        func add(_ slot: HashSlot) throws(RedisError) {
            if let found, found != slot {
                throw RedisError(
                    .crossSlot,
                    "\(name) touches keys in slots \(found) and \(slot): in a Redis Cluster one command (or function call) must stay in one slot; give its keys one {hash tag}"
                )
            }
            found = slot
        }
        if !keys.isEmpty {
            for key in keys { try add(HashSlot(key: key)) }
            return found
        }
        let words = self.words
        for index in RedisCommandKeys.positions(in: words) {
            try add(HashSlot(key: words[index].readableBytesView))
        }
        return found
    }

    /// The command's words (its name first), read back from the RESP it was encoded to.
    var words: [ByteBuffer] {
        var buffer = encoded
        var words: [ByteBuffer] = []
        guard buffer.readInteger(as: UInt8.self) == UInt8(ascii: "*"), let count = buffer.readRESPNumber() else { return [] }
        words.reserveCapacity(count)
        for _ in 0..<count {
            guard buffer.readInteger(as: UInt8.self) == UInt8(ascii: "$"), let length = buffer.readRESPNumber(),
                let word = buffer.readSlice(length: length), buffer.readBytes(length: 2) != nil
            else { return words }
            words.append(word)
        }
        return words
    }
}

extension ByteBuffer {
    /// Reads `<digits>\r\n`.
    fileprivate mutating func readRESPNumber() -> Int? {
        var value = 0
        while let byte = readInteger(as: UInt8.self) {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value * 10 + Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "\r"):
                return readInteger(as: UInt8.self) == UInt8(ascii: "\n") ? value : nil
            default: return nil
            }
        }
        return nil
    }
}
