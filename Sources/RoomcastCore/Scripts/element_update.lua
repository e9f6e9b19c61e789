-- element_update: applies changed fields to an element and emits `element:updated {elementId,
-- updates}`; a position change also brings it to front (then `updates` carries the new zIndex).
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
-- ARGV[6] to_front         '1' to bring the element to front
-- ARGV[7] answer_element   '1' to answer with the whole element too (REST; a socket's ack carries
--                          only the change, as a drag sends many and re-reading the element would
--                          cost more than the change)
-- ARGV[8…] fields          field, value … (validated by the caller)
-- REPLY offset, updates, element?
register_write('element_update', function(keys, args)
    local room, participants, z_order, stream, channel, element, _, profiles = unpack(keys)
    local user, element_id, room_id, now, events_kept, to_front, answer_element = unpack(args, 1, 7)
    check_participant(room, participants, user)
    check_element(element)
    local members = {}
    local pairs_ = {}
    for i = 8, #args, 2 do
        local name, value = args[i], args[i + 1]
        pairs_[#pairs_ + 1] = name
        pairs_[#pairs_ + 1] = value
        members[#members + 1] = json_member(name, value)
    end
    if #pairs_ > 0 then
        redis.call('HSET', element, unpack(pairs_))
    end
    local z
    if to_front == '1' then
        local moved
        z, moved = bring_to_front(room, z_order, element_id)
        if moved then members[#members + 1] = '"zIndex":' .. z end
    end
    touch(room, now)
    local json = '{' .. table.concat(members, ',') .. '}'
    local offset = emit_to(stream, channel, events_kept, 'element:updated',
        '"roomId":' .. quoted(room_id) .. ',"elementId":' .. quoted(element_id) .. ',"updates":' .. json)
    if answer_element ~= '1' then
        return { 'offset', offset, 'updates', json }
    end
    z = z or tonumber(redis.call('ZSCORE', z_order, element_id))
    return { 'offset', offset, 'updates', json, 'element', element_json(element, z, user, profiles) }
end)
