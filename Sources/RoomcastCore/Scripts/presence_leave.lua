-- presence_leave: a socket left the room (or disconnected).
--
-- KEYS[1] room           the room keys of _presence.lua
-- KEYS[2] participants
-- KEYS[3] presence
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] reads
-- ARGV[1] now            epoch ms
-- ARGV[2] events_kept
-- ARGV[3] room_id
-- ARGV[4] member         '<userId>|<socketId>'
-- REPLY announced?
--   announced: the offset of the `room:presence` event when presence changed
register_write('presence_leave', function(keys, args)
    local room, _, presence, stream, channel, reads = unpack(keys)
    local now, events_kept, room_id, member = unpack(args)
    redis.call('ZREM', presence, member)
    local announced = announce_presence(room, presence, stream, channel, reads, events_kept, room_id, now)
    if announced == '' then return {} end
    return { 'announced', announced }
end)
