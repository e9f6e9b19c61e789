-- element_delete: deletes an element (and its reactions) and emits `element:deleted {elementId}`.
-- Unseen counts do not shrink on delete; they are reported.
--
-- KEYS[1]  room           the element keys of _elements.lua
-- KEYS[2]  participants
-- KEYS[3]  z_order
-- KEYS[4]  stream
-- KEYS[5]  channel
-- KEYS[6]  element
-- KEYS[7]  reactions
-- KEYS[8]  profiles
-- KEYS[9]  presence       room:{<roomId>}:presence
-- KEYS[10] unseen         room:{<roomId>}:unseen
-- ARGV[1]  user
-- ARGV[2]  element_id
-- ARGV[3]  room_id
-- ARGV[4]  now            epoch ms
-- ARGV[5]  events_kept
-- REPLY offset, elementCount, unseen
--   unseen: { user, count, user, count … } for every participant
register_write('element_delete', function(keys, args)
    local room, participants, z_order, stream, channel, element, reactions, _, presence, unseen = unpack(keys)
    local user, element_id, room_id, now, events_kept = unpack(args)
    check_participant(room, participants, user)
    check_element(element)
    redis.call('DEL', element, reactions)
    redis.call('ZREM', z_order, element_id)
    local count = redis.call('HINCRBY', room, 'elementCount', -1)
    touch(room, now)
    local offset = emit_to(stream, channel, events_kept, 'element:deleted',
        '"roomId":' .. quoted(room_id) .. ',"elementId":' .. quoted(element_id))
    return { 'offset', offset, 'elementCount', count, 'unseen', unseen_counts(participants, presence, unseen, user, now, false) }
end)
