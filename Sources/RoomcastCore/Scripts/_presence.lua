-- Shared by the presence functions and message_send. They take a room's keys in one order:
--   room           room:{<roomId>}                 the room hash (`presence`, `messageSeq`)
--   participants   room:{<roomId>}:participants
--   presence       room:{<roomId>}:presence        member '<userId>|<socketId>', score expiry ms
--   stream         room:{<roomId>}:stream
--   channel        room:{<roomId>}:events          (a channel, declared as _elements.lua says)
--   reads          room:{<roomId>}:read:messages   user id → `messageSeq` they have seen

-- Users with at least one unexpired socket in the room, sorted; expired members are dropped.
local function present_users(presence, now)
    redis.call('ZREMRANGEBYSCORE', presence, '-inf', now)
    local seen, users = {}, {}
    for _, member in ipairs(redis.call('ZRANGE', presence, 0, -1)) do
        local user = string.match(member, '^([^|]+)|')
        if user and not seen[user] then
            seen[user] = true
            users[#users + 1] = user
        end
    end
    table.sort(users)
    return users
end

-- Unseen chat messages are `messageSeq` minus the user's read position, and 0 while the user is
-- present: so a message costs the same whatever the room's size. A user's read position is set
-- to the room's sequence when they join (presence_join.lua) and when their last socket leaves or
-- expires (here), so messages sent while they were present are never counted.
local function close_reads(room, reads, announced, users)
    if not announced or announced == '[]' then return end
    local staying = {}
    for _, user in ipairs(users) do staying[user] = true end
    local sequence = redis.call('HGET', room, 'messageSeq') or '0'
    for _, user in ipairs(cjson.decode(announced)) do
        if not staying[user] then redis.call('HSET', reads, user, sequence) end
    end
end

-- The members of `room:presence {roomId, isActive, activeUserIds}` for `list`, a JSON array.
local function presence_members(room_id, list)
    return '"roomId":' .. cjson.encode(room_id) .. ',"isActive":' .. tostring(list ~= '[]') .. ',"activeUserIds":' .. list
end

-- Emits `room:presence {roomId, isActive, activeUserIds}` when the set of present users differs
-- from the last one announced (kept in the room hash), so expiries are announced too; users who
-- are gone get their read position closed. Returns the event's offset, or '' when nothing changed.
local function announce_presence(room, presence, stream, channel, reads, events_kept, room_id, now)
    local users = present_users(presence, now)
    local list = #users == 0 and '[]' or cjson.encode(users)
    local announced = redis.call('HGET', room, 'presence')
    if announced == list then
        return ''
    end
    close_reads(room, reads, announced, users)
    redis.call('HSET', room, 'presence', list)
    return emit_to(stream, channel, events_kept, 'room:presence', presence_members(room_id, list))
end
