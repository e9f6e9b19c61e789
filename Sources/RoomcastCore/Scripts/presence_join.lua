-- presence_join: a socket opens the room, in one step: its membership is checked, it catches up
-- (the events it missed are read back, or the room's elements when they cannot all be), it counts
-- as present until its expiry, and the user's unseen counts drop to 0 (they are looking at the
-- room). The catch-up is read before the presence changes, so a `room:presence` this join causes
-- comes after it, as a live event.
--
-- KEYS[1] room           the room keys of _presence.lua
-- KEYS[2] participants
-- KEYS[3] presence
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] reads
-- KEYS[7] unseen         room:{<roomId>}:unseen
-- KEYS[8] z_order        room:{<roomId>}:z (the room's elements, for a snapshot)
-- KEYS[9] profiles       room:{<roomId>}:profiles
-- ARGV[1] now            epoch ms
-- ARGV[2] expiry         epoch ms: the member's backstop
-- ARGV[3] events_kept
-- ARGV[4] room_id
-- ARGV[5] user
-- ARGV[6] member         '<userId>|<socketId>'
-- ARGV[7] catch_up       '' for none, 'snapshot', or the last offset the client saw (`<ms>-<seq>`):
--                        the events after it when the stream still has them all, else a snapshot
-- ARGV[8] most           the most events replayed; further back, a snapshot
-- ARGV[9] element_prefix room:{<roomId>}:element:
-- REPLY activeUserIds, offset, announced?, joinerFrame?, wasOpen?, caughtUp?, entries?, elements?
--   activeUserIds: the present users as a JSON array; offset: the room stream's last offset;
--   announced: the offset of the `room:presence` event when the join changed who is present;
--   joinerFrame: otherwise, the `room:presence` frame for the joiner alone, so a joiner whose
--   arrival changed nothing (another device of a present user) still learns who is there;
--   wasOpen: the room was open already on another socket of the user, so the join changed none
--   of the user's unseen counts (both were 0: present in the announced list for messages, with
--   an unexpired member and nothing counted for elements);
--   with a catch-up, caughtUp: the offset it is current at, and either entries (the missed
--   events as XRANGE gives them) or elements (a JSON array, zIndex ascending)
-- Errors: NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.
register_write('presence_join', function(keys, args)
    local room, participants, presence, stream, channel, reads, unseen, z_order, profiles = unpack(keys)
    local now, expiry, events_kept, room_id, user, member, catch_up, most, element_prefix = unpack(args)
    check_participant(room, participants, user)
    local caught_up, entries, elements
    if catch_up ~= '' then
        if catch_up ~= 'snapshot' then caught_up, entries = replayable(stream, catch_up, tonumber(most)) end
        if not caught_up then
            elements = elements_json(z_order, element_prefix, user, profiles)
            caught_up = last_offset(stream)
        end
    end
    local was_open = tonumber(redis.call('HGET', unseen, user) or '0') == 0
        and string.find(redis.call('HGET', room, 'presence') or '[]', '"' .. user .. '"', 1, true) ~= nil
        and present_set(presence, now)[user] == true
    redis.call('ZADD', presence, expiry, member)
    redis.call('HSET', unseen, user, 0)
    redis.call('HSET', reads, user, redis.call('HGET', room, 'messageSeq') or '0')
    local announced = announce_presence(room, presence, stream, channel, reads, events_kept, room_id, now)
    local list = redis.call('HGET', room, 'presence') or '[]'
    local last = last_offset(stream)
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
    if caught_up then
        reply[#reply + 1] = 'caughtUp'
        reply[#reply + 1] = caught_up
        if entries then
            reply[#reply + 1] = 'entries'
            reply[#reply + 1] = entries
        else
            reply[#reply + 1] = 'elements'
            reply[#reply + 1] = elements
        end
    end
    return reply
end)
