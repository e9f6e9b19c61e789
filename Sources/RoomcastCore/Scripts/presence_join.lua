-- presence_join: a socket opened the room: it counts as present until its expiry, and the user's
-- unseen counts drop to 0 (they are looking at the room).
--
-- KEYS[1] room           the room keys of _presence.lua
-- KEYS[2] participants
-- KEYS[3] presence
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] reads
-- KEYS[7] unseen         room:{<roomId>}:unseen
-- ARGV[1] now            epoch ms
-- ARGV[2] expiry         epoch ms: the member's backstop
-- ARGV[3] events_kept
-- ARGV[4] room_id
-- ARGV[5] user
-- ARGV[6] member         '<userId>|<socketId>'
-- REPLY activeUserIds, offset, announced?, joinerFrame?, wasOpen?
--   activeUserIds: the present users as a JSON array; offset: the room stream's last offset;
--   announced: the offset of the `room:presence` event when the join changed who is present;
--   joinerFrame: otherwise, the `room:presence` frame for the joiner alone, so a joiner whose
--   arrival changed nothing (another device of a present user) still learns who is there;
--   wasOpen: the room was open already on another socket of the user, so the join changed none
--   of the user's unseen counts (both were 0: present in the announced list for messages, with
--   an unexpired member and nothing counted for elements)
-- Errors: FORBIDDEN for a non-participant.
register_write('presence_join', function(keys, args)
    local room, participants, presence, stream, channel, reads, unseen = unpack(keys)
    local now, expiry, events_kept, room_id, user, member = unpack(args)
    if redis.call('SISMEMBER', participants, user) == 0 then
        return redis.error_reply('FORBIDDEN not a participant of this room')
    end
    local was_open = tonumber(redis.call('HGET', unseen, user) or '0') == 0
        and string.find(redis.call('HGET', room, 'presence') or '[]', '"' .. user .. '"', 1, true) ~= nil
        and present_set(presence, now)[user] == true
    redis.call('ZADD', presence, expiry, member)
    redis.call('HSET', unseen, user, 0)
    redis.call('HSET', reads, user, redis.call('HGET', room, 'messageSeq') or '0')
    local announced = announce_presence(room, presence, stream, channel, reads, events_kept, room_id, now)
    local list = redis.call('HGET', room, 'presence') or '[]'
    local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
    last = last[1] and last[1][1] or '0-0'
    local reply
    if announced ~= '' then
        reply = { 'activeUserIds', list, 'offset', last, 'announced', announced }
    else
        -- Nobody's presence changed: the joiner alone is told who is there, at the current offset.
        local frame = event_frame('room:presence', presence_members(room_id, list) .. ',"offset":"' .. last .. '"')
        reply = { 'activeUserIds', list, 'offset', last, 'joinerFrame', frame }
    end
    if was_open then
        reply[#reply + 1] = 'wasOpen'
        reply[#reply + 1] = 1
    end
    return reply
end)
