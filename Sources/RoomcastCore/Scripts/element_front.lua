-- element_front: brings an element to the top of the stack and emits `element:z-index-changed`;
-- an element already on top changes nothing and emits nothing.
--
-- KEYS[1] room           the element keys of _elements.lua
-- KEYS[2] participants
-- KEYS[3] z_order
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] element
-- KEYS[7] reactions
-- KEYS[8] profiles
-- ARGV[1] user
-- ARGV[2] element_id
-- ARGV[3] room_id
-- ARGV[4] now              epoch ms
-- ARGV[5] events_kept
-- REPLY zIndex, offset?
--   offset: missing when the element was on top already
register_write('element_front', function(keys, args)
    local room, participants, z_order, stream, channel, element, _, _ = unpack(keys)
    local user, element_id, room_id, now, events_kept = unpack(args)
    check_participant(room, participants, user)
    check_element(element)
    local z, moved = bring_to_front(room, z_order, element_id)
    if not moved then
        return { 'zIndex', z }
    end
    touch(room, now)
    local offset = emit_to(stream, channel, events_kept, 'element:z-index-changed',
        '"roomId":' .. quoted(room_id) .. ',"elementId":' .. quoted(element_id) .. ',"zIndex":' .. z)
    return { 'zIndex', z, 'offset', offset }
end)
