-- Creates an element on top of the room's stack and emits `element:created`.
-- KEYS: the element layout of _shared.lua, KEYS[6] the new element's hash.
-- ARGV[1] user id, ARGV[2] element id, ARGV[3] room id, ARGV[4] now (epoch ms),
-- ARGV[5] events kept, ARGV[6] creator's public profile as JSON (stored in the room's profiles
-- only when the room has none for them: a profile change keeps those current), ARGV[7] most elements per room,
-- ARGV[8…] field, value, field, value … (validated by the caller; createdAt included)
-- KEYS[9] presence set, KEYS[10] unseen elements hash, KEYS[11] the request key (optional, _request.lua).
-- Every participant who does not have the room open, the creator aside, gets one more unseen element.
-- Returns { offset, element JSON, elementCount, user, unseen count, user, unseen count … }.
check_participant(ARGV[1])
local earlier = earlier_reply(KEYS[11])
if earlier then return { 'replayed', earlier } end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then
    error({ err = 'LIMIT the room has reached its element limit' })
end
-- The element references its creator by id; the profile is read from the room's when sent.
redis.call('HSETNX', KEYS[8], ARGV[1], ARGV[6])
local fields = { 'id', ARGV[2], 'roomId', ARGV[3], 'createdBy', ARGV[1] }
for i = 8, #ARGV do
    fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[6], unpack(fields))
local z = next_z()
redis.call('ZADD', KEYS[3], z, ARGV[2])
local count = redis.call('HINCRBY', KEYS[1], 'elementCount', 1)
touch(ARGV[4])
-- A new element has no reactions: the same JSON serves every recipient.
local element = element_json(KEYS[6], z, nil)
local offset = emit('element:created', '"roomId":' .. quoted(ARGV[3]) .. ',"element":' .. element, ARGV[5])
return remember_reply(KEYS[11], append_all({ offset, element, count }, unseen_counts(KEYS[2], KEYS[9], KEYS[10], ARGV[1], ARGV[4], true)))
