-- Applies a transform (scale, rotation, size, position), brings the element to front and emits
-- `element:transformed {element}`.
-- KEYS: the element layout of _shared.lua.
-- ARGV[1] user id, ARGV[2] element id, ARGV[3] room id, ARGV[4] now, ARGV[5] events kept,
-- ARGV[6…] field, value … (validated by the caller)
-- Returns { offset, element JSON }.
check_participant(ARGV[1])
check_element()
if #ARGV >= 7 then
    redis.call('HSET', KEYS[6], unpack(ARGV, 6))
end
local z = bring_to_front(ARGV[2])
touch(ARGV[4])
local element = element_json(KEYS[6], z)
local offset = emit('element:transformed', '"roomId":' .. quoted(ARGV[3]) .. ',"element":' .. element, ARGV[5])
return { offset, element }
