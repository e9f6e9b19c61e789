-- Deletes an element (and its reactions) and emits `element:deleted {elementId}`.
-- KEYS: the element layout of _shared.lua, KEYS[7] the element's reactions.
-- ARGV[1] user id, ARGV[2] element id, ARGV[3] room id, ARGV[4] now, ARGV[5] events kept
-- Returns { offset, elementCount }.
check_participant(ARGV[1])
check_element()
redis.call('DEL', KEYS[6], KEYS[7])
redis.call('ZREM', KEYS[3], ARGV[2])
local count = redis.call('HINCRBY', KEYS[1], 'elementCount', -1)
touch(ARGV[4])
local offset = emit('element:deleted', '"roomId":' .. quoted(ARGV[3]) .. ',"elementId":' .. quoted(ARGV[2]), ARGV[5])
return { offset, count }
