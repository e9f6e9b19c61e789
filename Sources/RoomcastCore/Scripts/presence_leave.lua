-- A socket left the room (or disconnected).
-- KEYS: the layout of _presence.lua. ARGV: as in _presence.lua, ARGV[5] presence member.
-- Returns the offset of a `room:presence` event, or '' when presence did not change.
redis.call('ZREM', KEYS[3], ARGV[5])
return announce_presence(ARGV[1])
