-- Brings an element to the top of the stack and emits `element:z-index-changed`; an element
-- already on top changes nothing and emits nothing.
-- KEYS: the element layout of _shared.lua.
-- ARGV[1] user id, ARGV[2] element id, ARGV[3] room id, ARGV[4] now, ARGV[5] events kept
-- Returns { offset or '', zIndex }.
check_participant(ARGV[1])
check_element()
local z, moved = bring_to_front(ARGV[2])
if not moved then
    return { '', z }
end
touch(ARGV[4])
local offset = emit('element:z-index-changed', '"roomId":' .. quoted(ARGV[3]) .. ',"elementId":' .. quoted(ARGV[2]) .. ',"zIndex":' .. z, ARGV[5])
return { offset, z }
