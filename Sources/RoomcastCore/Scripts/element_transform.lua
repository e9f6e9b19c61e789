-- Applies a transform (scale, rotation, size, position), brings the element to front and emits
-- `element:transformed {element}`; when the element has hearts, each recipient's copy shows
-- whether that recipient has reacted.
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
local function members_for(viewer)
    return '"roomId":' .. quoted(ARGV[3]) .. ',"element":' .. element_json(KEYS[6], z, viewer)
end
local offset
local count, reactors = reaction_stats(KEYS[7])
if count == 0 then
    offset = emit('element:transformed', members_for(nil), ARGV[5])
else
    offset = emit_per_user(KEYS[4], KEYS[5], ARGV[5], 'element:transformed', reactors, members_for)
end
return { offset, element_json(KEYS[6], z, ARGV[1]) }
