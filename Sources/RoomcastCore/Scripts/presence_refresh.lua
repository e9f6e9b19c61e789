-- presence_refresh: a node keeps its sockets present: their expiry moves forward, while members of
-- sockets no node refreshes (a crashed node's) expire and are announced gone.
-- A member can be gone because a leave raced this refresh (it must not come back: the first
-- pass, `restoring` '0', only extends), or because Redis lost it (a restart without a full AOF)
-- or let it expire while it was away: the node checks which gone members it still holds and adds
-- those back with `restoring` '1'.
--
-- KEYS[1] room           the room keys of _presence.lua
-- KEYS[2] participants
-- KEYS[3] presence
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] reads
-- ARGV[1] now            epoch ms
-- ARGV[2] expiry         epoch ms: the members' new backstop
-- ARGV[3] events_kept
-- ARGV[4] room_id
-- ARGV[5] restoring      '1' to add back members that are gone
-- ARGV[6…] members       '<userId>|<socketId>' …
-- REPLY gone, announced?
--   gone: the members that were gone; announced: the offset of a `room:presence` event
register_write('presence_refresh', function(keys, args)
    local room, _, presence, stream, channel, reads = unpack(keys)
    local now, expiry, events_kept, room_id, restoring = unpack(args, 1, 5)
    local gone = {}
    for i = 6, #args do
        local present = redis.call('ZSCORE', presence, args[i])
        if not present then
            gone[#gone + 1] = args[i]
        end
        if present or restoring == '1' then
            redis.call('ZADD', presence, expiry, args[i])
        end
    end
    local announced = announce_presence(room, presence, stream, channel, reads, events_kept, room_id, now)
    if announced == '' then return { 'gone', gone } end
    return { 'gone', gone, 'announced', announced }
end)
