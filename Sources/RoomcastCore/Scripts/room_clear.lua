-- room_clear: removes every element of a room (and their reactions) and emits `room:cleared
-- {roomId}`. Element keys share the room's hash tag, so deleting them stays in this function's
-- slot (derived from `element_prefix`: see _elements.lua).
--
-- KEYS[1] room           the room keys of _elements.lua
-- KEYS[2] participants
-- KEYS[3] z_order
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] presence       room:{<roomId>}:presence
-- KEYS[7] unseen         room:{<roomId>}:unseen
-- ARGV[1] user
-- ARGV[2] element_prefix   room:{<roomId>}:element:
-- ARGV[3] room_id
-- ARGV[4] now              epoch ms
-- ARGV[5] events_kept
-- ARGV[6] reactions_suffix ':reactions'
-- REPLY offset, removed, unseen
--   removed: how many elements went; unseen: { user, count, user, count … }
register_write('room_clear', function(keys, args)
    local room, participants, z_order, stream, channel, presence, unseen = unpack(keys)
    local user, element_prefix, room_id, now, events_kept, reactions_suffix = unpack(args)
    check_participant(room, participants, user)
    local ids = redis.call('ZRANGE', z_order, 0, -1)
    for _, id in ipairs(ids) do
        redis.call('DEL', element_prefix .. id, element_prefix .. id .. reactions_suffix)
    end
    redis.call('DEL', z_order)
    redis.call('HSET', room, 'elementCount', 0)
    touch(room, now)
    local offset = emit_to(stream, channel, events_kept, 'room:cleared', '"roomId":' .. quoted(room_id))
    return { 'offset', offset, 'removed', #ids, 'unseen', unseen_counts(participants, presence, unseen, user, now, false) }
end)
