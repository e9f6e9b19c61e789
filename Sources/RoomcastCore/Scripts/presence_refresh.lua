-- A node keeps its sockets present: their expiry moves forward, while members of sockets no node
-- refreshes (a crashed node's) expire and are announced gone.
-- KEYS: the layout of _presence.lua. ARGV: as in _presence.lua, ARGV[5…] presence members.
-- Returns the offset of a `room:presence` event, or '' when presence did not change.
-- XX: a refresh only extends members that are still there; one removed by a leave that raced
-- this refresh must not come back.
for i = 5, #ARGV do
    redis.call('ZADD', KEYS[3], 'XX', ARGV[2], ARGV[i])
end
return announce_presence(ARGV[1])
