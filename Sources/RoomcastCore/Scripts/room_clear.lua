-- Removes every element of a room (and their reactions) and emits `room:cleared {roomId}`.
-- KEYS: the element layout of _shared.lua, KEYS[6] presence set, KEYS[7] unseen elements hash.
-- ARGV[1] user id, ARGV[2] element key prefix (room:{<roomId>}:element:), ARGV[3] room id,
-- ARGV[4] now, ARGV[5] events kept, ARGV[6] reactions key suffix (':reactions')
-- Element keys share the room's hash tag, so deleting them stays in this script's slot.
-- Returns { offset, elements removed, user, unseen count … }.
check_participant(ARGV[1])
local ids = redis.call('ZRANGE', KEYS[3], 0, -1)
for _, id in ipairs(ids) do
    redis.call('DEL', ARGV[2] .. id, ARGV[2] .. id .. ARGV[6])
end
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[1], 'elementCount', 0)
touch(ARGV[4])
local offset = emit('room:cleared', '"roomId":' .. quoted(ARGV[3]), ARGV[5])
return append_all({ offset, #ids }, unseen_counts(KEYS[2], KEYS[6], KEYS[7], ARGV[1], ARGV[4], false))
