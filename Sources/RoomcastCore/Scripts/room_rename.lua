-- room_rename: sets or clears a room's name and moves its updatedAt, for participants only.
--
-- KEYS[1] room           room:{<roomId>}
-- KEYS[2] participants   room:{<roomId>}:participants
-- KEYS[3] presence       room:{<roomId>}:presence   (members scored by expiry, ms)
-- ARGV[1] user
-- ARGV[2] name           '' clears it
-- ARGV[3] now            epoch ms
-- REPLY room, participants, live
--   room: the room hash (HGETALL); participants: their ids; live: unexpired presence members
-- Errors: NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.
register_write('room_rename', function(keys, args)
    local room, participants, presence = unpack(keys)
    local user, name, now = unpack(args)
    if redis.call('SISMEMBER', participants, user) == 0 then
        if redis.call('EXISTS', room) == 0 then
            return redis.error_reply('NOT_FOUND room not found')
        end
        return redis.error_reply('FORBIDDEN not a participant of this room')
    end
    redis.call('HSET', room, 'name', name, 'updatedAt', now)
    return { 'room', redis.call('HGETALL', room), 'participants', redis.call('SMEMBERS', participants),
        'live', redis.call('ZCOUNT', presence, now, '+inf') }
end)
