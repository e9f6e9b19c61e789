-- A node keeps its sockets present: their expiry moves forward, while members of sockets no node
-- refreshes (a crashed node's) expire and are announced gone.
-- KEYS: the layout of _presence.lua. ARGV: as in _presence.lua, ARGV[5] '1' to add back members
-- that are gone, ARGV[6…] presence members.
-- Returns { offset of a `room:presence` event or '' when presence did not change, the members
-- that were gone }.
-- A member can be gone because a leave raced this refresh (it must not come back: the first
-- pass, ARGV[5] '0', only extends), or because Redis lost it (a restart without a full AOF) or
-- let it expire while it was away: the node checks which gone members it still holds and adds
-- those back with ARGV[5] '1'.
local gone = {}
for i = 6, #ARGV do
    local present = redis.call('ZSCORE', KEYS[3], ARGV[i])
    if not present then
        gone[#gone + 1] = ARGV[i]
    end
    if present or ARGV[5] == '1' then
        redis.call('ZADD', KEYS[3], ARGV[2], ARGV[i])
    end
end
return { announce_presence(ARGV[1]), gone }
