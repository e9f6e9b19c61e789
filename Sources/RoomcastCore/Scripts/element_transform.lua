-- element_transform: applies a transform (scale, rotation, size, position), brings the element to
-- front and emits `element:transformed {element}`; when the element has hearts, each recipient's
-- copy shows whether that recipient has reacted.
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
-- ARGV[6…] fields          field, value … (validated by the caller)
-- REPLY offset, element
register_write('element_transform', function(keys, args)
    local room, participants, z_order, stream, channel, element, reactions, profiles = unpack(keys)
    local user, element_id, room_id, now, events_kept = unpack(args, 1, 5)
    check_participant(room, participants, user)
    check_element(element)
    if #args >= 7 then
        redis.call('HSET', element, unpack(args, 6))
    end
    local z = bring_to_front(room, z_order, element_id)
    touch(room, now)
    local function members_for(viewer)
        return '"roomId":' .. quoted(room_id) .. ',"element":' .. element_json(element, z, viewer, profiles)
    end
    local offset
    local count, reactors = reaction_stats(reactions, profiles)
    if count == 0 then
        offset = emit_to(stream, channel, events_kept, 'element:transformed', members_for(nil))
    else
        offset = emit_per_user(stream, channel, events_kept, 'element:transformed', reactors, members_for)
    end
    return { 'offset', offset, 'element', element_json(element, z, user, profiles) }
end)
