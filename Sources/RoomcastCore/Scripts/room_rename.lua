-- Sets or clears a room's name and moves its updatedAt, for participants only.
-- KEYS[1]  room hash                 room:{<roomId>}
-- KEYS[2]  participants set          room:{<roomId>}:participants
-- KEYS[3]  presence sorted set       room:{<roomId>}:presence   (members scored by expiry, ms)
-- ARGV[1]  user id
-- ARGV[2]  name ('' clears it)
-- ARGV[3]  now, epoch milliseconds
-- Returns { room hash as HGETALL, participant ids, live presence entries };
-- error NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
    if redis.call('EXISTS', KEYS[1]) == 0 then
        return redis.error_reply('NOT_FOUND room not found')
    end
    return redis.error_reply('FORBIDDEN not a participant of this room')
end
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'updatedAt', ARGV[3])
return { redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2]), redis.call('ZCOUNT', KEYS[3], ARGV[3], '+inf') }
