import NIOCore

/// Where the keys of a command sit among its words, for the commands that do not declare them.
///
/// A small table in the spirit of `COMMAND INFO`'s key specs, for the commands a gateway sends.
/// A command not listed has no keys and goes to any master.
enum RedisCommandKeys {
    private enum Rule {
        /// One key, at this word index (the command name is word 0).
        case at(Int)
        /// Every word from this index on is a key (`DEL a b c`).
        case allFrom(Int)
        /// Every other word from this index on (`MSET k v k v`).
        case everyOtherFrom(Int)
        /// Word 2 holds how many keys follow it (`EVALSHA sha n k1 .. kn`).
        case counted
        /// A subcommand at word 1, then the key at word 2 (`XGROUP CREATE key`).
        case afterSubcommand
        /// The keys are the first half of the words after `STREAMS` (`XREAD ... STREAMS a b 0 0`).
        case streams
        /// The first two words are keys (`RENAME a b`).
        case firstTwo
        /// `PUBSUB SHARDNUMSUB channel ...`: a shard channel hashes like a key, and only its
        /// shard knows its subscribers.
        case shardChannels
    }

    private static let rules: [String: Rule] = {
        var rules: [String: Rule] = [:]
        let single = """
            GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX INCR INCRBY INCRBYFLOAT DECR DECRBY APPEND STRLEN \
            GETRANGE SETRANGE SETBIT GETBIT BITCOUNT BITPOS \
            HSET HSETNX HGET HMGET HMSET HDEL HGETALL HKEYS HVALS HLEN HEXISTS HINCRBY HINCRBYFLOAT HSCAN \
            HRANDFIELD HSTRLEN \
            ZADD ZREM ZRANGE ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZCOUNT ZLEXCOUNT \
            ZCARD ZSCORE ZMSCORE ZINCRBY ZRANK ZREVRANK ZREMRANGEBYSCORE ZREMRANGEBYRANK ZREMRANGEBYLEX ZPOPMIN \
            ZPOPMAX ZSCAN ZRANDMEMBER \
            SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SSCAN \
            LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LRANGE LLEN LINDEX LSET LREM LTRIM LINSERT LPOS \
            EXPIRE PEXPIRE EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME TTL PTTL PERSIST TYPE DUMP RESTORE \
            XADD XRANGE XREVRANGE XLEN XDEL XTRIM XACK XPENDING XCLAIM XAUTOCLAIM XSETID \
            PFADD PFCOUNT GEOADD GEOPOS GEODIST GEOSEARCH SORT SORT_RO \
            PUBLISH SPUBLISH
            """
        for name in single.split(separator: " ") { rules[String(name)] = .at(1) }
        for name in ["DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "WATCH", "SUNION", "SINTER", "SDIFF"] {
            rules[name] = .allFrom(1)
        }
        rules["MSET"] = .everyOtherFrom(1)
        rules["MSETNX"] = .everyOtherFrom(1)
        for name in ["EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"] { rules[name] = .counted }
        for name in ["XGROUP", "XINFO", "OBJECT", "MEMORY"] { rules[name] = .afterSubcommand }
        for name in ["XREAD", "XREADGROUP"] { rules[name] = .streams }
        for name in ["RENAME", "RENAMENX", "RPOPLPUSH", "LMOVE", "SMOVE", "COPY"] { rules[name] = .firstTwo }
        rules["PUBSUB"] = .shardChannels
        return rules
    }()

    /// The indexes of the key words in `words` (word 0 is the command name).
    static func positions(in words: [ByteBuffer]) -> [Int] {
        guard let first = words.first, let rule = rules[String(buffer: first).uppercased()] else { return [] }
        let count = words.count
        switch rule {
        case .at(let index):
            return index < count ? [index] : []
        case .allFrom(let index):
            return Array(index..<max(index, count))
        case .everyOtherFrom(let index):
            return Array(stride(from: index, to: count, by: 2))
        case .counted:
            guard count > 2, let keys = Int(String(buffer: words[2])), keys > 0 else { return [] }
            return Array(3..<min(3 + keys, count))
        case .afterSubcommand:
            guard count > 2 else { return [] }
            // `XGROUP HELP`, `XINFO HELP` and the like have no key.
            return String(buffer: words[1]).uppercased() == "HELP" ? [] : [2]
        case .streams:
            guard let marker = words.firstIndex(where: { String(buffer: $0).uppercased() == "STREAMS" }) else { return [] }
            let rest = count - marker - 1
            return rest >= 2 ? Array((marker + 1)..<(marker + 1 + rest / 2)) : []
        case .firstTwo:
            return Array(1..<min(3, count))
        case .shardChannels:
            guard count > 2, String(buffer: words[1]).uppercased() == "SHARDNUMSUB" else { return [] }
            return Array(2..<count)
        }
    }
}
