-- element_create: creates an element on top of the room's stack and emits `element:created`.
-- Every participant who does not have the room open, the creator aside, gets one more unseen
-- element.
--
-- KEYS[1]  room           the element keys of _elements.lua: room:{<roomId>} …
-- KEYS[2]  participants
-- KEYS[3]  z_order
-- KEYS[4]  stream
-- KEYS[5]  channel
-- KEYS[6]  element        the new element's hash
-- KEYS[7]  reactions
-- KEYS[8]  profiles
-- KEYS[9]  presence       room:{<roomId>}:presence
-- KEYS[10] unseen         room:{<roomId>}:unseen
-- KEYS[11] request?       the request key (_request.lua), when the client sent a request id
-- ARGV[1]  user           the creator's id
-- ARGV[2]  element_id
-- ARGV[3]  room_id
-- ARGV[4]  now            epoch ms
-- ARGV[5]  events_kept
-- ARGV[6]  creator        the creator's public profile as JSON (stored in the room's profiles
--                         only when the room has none for them: a profile change keeps those current)
-- ARGV[7]  max_elements   most elements per room
-- ARGV[8…] fields         field, value, field, value … (validated by the caller; createdAt included)
-- REPLY offset, element, elementCount, unseen?, replayed?
--   unseen: { user, count, user, count … } for every participant (not on a replay)
local ELEMENT_CREATE_RECORD = { 'offset', 'element', 'elementCount' }

register_write('element_create', function(keys, args)
    local room, participants, z_order, stream, channel, element, _, profiles, presence, unseen, request = unpack(keys)
    local user, element_id, room_id, now, events_kept, creator, max_elements = unpack(args, 1, 7)
    check_participant(room, participants, user)
    local earlier = recorded_reply(request, ELEMENT_CREATE_RECORD)
    if earlier then return earlier end
    if redis.call('ZCARD', z_order) >= tonumber(max_elements) then
        error({ err = 'LIMIT the room has reached its element limit' })
    end
    -- The element references its creator by id; the profile is read from the room's when sent.
    redis.call('HSETNX', profiles, user, creator)
    local fields = { 'id', element_id, 'roomId', room_id, 'createdBy', user }
    for i = 8, #args do
        fields[#fields + 1] = args[i]
    end
    redis.call('HSET', element, unpack(fields))
    local z = next_z(room)
    redis.call('ZADD', z_order, z, element_id)
    local count = redis.call('HINCRBY', room, 'elementCount', 1)
    touch(room, now)
    -- A new element has no reactions: the same JSON serves every recipient.
    local json = element_json(element, z, nil, profiles)
    local offset = emit_to(stream, channel, events_kept, 'element:created', '"roomId":' .. quoted(room_id) .. ',"element":' .. json)
    local reply = record_reply(request, ELEMENT_CREATE_RECORD, { offset, json, count })
    reply[#reply + 1] = 'unseen'
    reply[#reply + 1] = unseen_counts(participants, presence, unseen, user, now, true)
    return reply
end)
