-- A dead node's sockets leave the room: its members go and the room hears who is left.
-- KEYS: the layout of _presence.lua. ARGV: as in _presence.lua, ARGV[5] the dead node's id.
-- A member is '<userId>|<socketId>' and a socket id starts with the id of the node holding it
-- (Engine.IO session ids, EngineIOSessionID.swift), so the node's members are found by prefix.
-- Returns { offset of a `room:presence` event or '' when presence did not change, the number of
-- members removed }.
local prefix = '|' .. ARGV[5]
local removed = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    local bar = string.find(member, '|', 1, true)
    if bar and string.sub(member, bar, bar + #prefix - 1) == prefix then
        redis.call('ZREM', KEYS[3], member)
        removed = removed + 1
    end
end
return { announce_presence(ARGV[1]), removed }
