-- presence_reap: a dead node's sockets leave the room: its members go and the room hears who is
-- left. A member is '<userId>|<socketId>' and a socket id starts with the id of the node holding
-- it (Engine.IO session ids, EngineIOSessionID.swift), so the node's members are found by prefix.
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
-- ARGV[4] node           the dead node's id
-- REPLY removed, announced?
--   removed: how many members went; announced: the offset of a `room:presence` event
register_write('presence_reap', function(keys, args)
    local room, _, presence, stream, channel, reads = unpack(keys)
    local now, events_kept, room_id, node = unpack(args)
    local prefix = '|' .. node
    local removed = 0
    for _, member in ipairs(redis.call('ZRANGE', presence, 0, -1)) do
        local bar = string.find(member, '|', 1, true)
        if bar and string.sub(member, bar, bar + #prefix - 1) == prefix then
            redis.call('ZREM', presence, member)
            removed = removed + 1
        end
    end
    local announced = announce_presence(room, presence, stream, channel, reads, events_kept, room_id, now)
    if announced == '' then return { 'removed', removed } end
    return { 'removed', removed, 'announced', announced }
end)
