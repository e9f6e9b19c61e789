-- Deletes an element (and its reactions) and emits `element:deleted {elementId}`.
-- KEYS: the element layout of _shared.lua, KEYS[9] presence set,
-- KEYS[10] unseen elements hash (unseen counts do not shrink on delete; they are reported).
-- ARGV[1] user id, ARGV[2] element id, ARGV[3] room id, ARGV[4] now, ARGV[5] events kept
-- Returns { offset, elementCount, user, unseen count … }.
check_participant(ARGV[1])
check_element()
redis.call('DEL', KEYS[6], KEYS[7])
redis.call('ZREM', KEYS[3], ARGV[2])
local count = redis.call('HINCRBY', KEYS[1], 'elementCount', -1)
touch(ARGV[4])
local offset = emit('element:deleted', '"roomId":' .. quoted(ARGV[3]) .. ',"elementId":' .. quoted(ARGV[2]), ARGV[5])
return append_all({ offset, count }, unseen_counts(KEYS[2], KEYS[9], KEYS[10], ARGV[1], ARGV[4], false))
