-- A socket opened the room: it counts as present until its expiry, and the user's unseen
-- counts drop to 0 (they are looking at the room).
-- KEYS: the layout of _presence.lua, plus KEYS[7] unseen elements hash.
-- ARGV: as in _presence.lua, ARGV[5] user id, ARGV[6] presence member ('<userId>|<socketId>').
-- Returns { offset of a `room:presence` event or '' when presence did not change, the present
-- users as a JSON array, the room stream's last offset, and when presence did not change the
-- `room:presence` frame for the joiner alone (else '') }: a joiner whose arrival changed nothing
-- (another device of a present user) still learns who is there.
if redis.call('SISMEMBER', KEYS[2], ARGV[5]) == 0 then
    return redis.error_reply('FORBIDDEN not a participant of this room')
end
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[6])
redis.call('HSET', KEYS[7], ARGV[5], 0)
redis.call('HSET', KEYS[6], ARGV[5], redis.call('HGET', KEYS[1], 'messageSeq') or '0')
local offset = announce_presence(ARGV[1])
local list = redis.call('HGET', KEYS[1], 'presence') or '[]'
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
last = last[1] and last[1][1] or '0-0'
-- Nobody's presence changed: the joiner alone is told who is there, at the current offset.
local joiner = offset == '' and event_frame('room:presence', presence_members(list) .. ',"offset":"' .. last .. '"') or ''
return { offset, list, last, joiner }
