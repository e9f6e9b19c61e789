-- Shared by the presence scripts (prepended when loaded). KEYS layout:
--   KEYS[1] room hash           room:{<roomId>}
--   KEYS[2] participants set    room:{<roomId>}:participants
--   KEYS[3] presence set        room:{<roomId>}:presence   (member '<userId>|<socketId>', score expiry ms)
--   KEYS[4] room event stream   room:{<roomId>}:stream
--   KEYS[5] room channel        room:{<roomId>}:events
--   KEYS[6] read positions      room:{<roomId>}:read:messages   (user id → `messageSeq` they have seen)
-- ARGV[1] now (epoch ms), ARGV[2] expiry (epoch ms), ARGV[3] events kept, ARGV[4] room id,
-- ARGV[5…] per script.

-- Users with at least one unexpired socket in the room, sorted; expired members are dropped.
local function present_users(now)
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
    local seen, users = {}, {}
    for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
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
local function close_reads(announced, users)
    if not announced or announced == '[]' then return end
    local staying = {}
    for _, user in ipairs(users) do staying[user] = true end
    local sequence = redis.call('HGET', KEYS[1], 'messageSeq') or '0'
    for _, user in ipairs(cjson.decode(announced)) do
        if not staying[user] then redis.call('HSET', KEYS[6], user, sequence) end
    end
end

-- The members of `room:presence {roomId, isActive, activeUserIds}` for `list`, a JSON array.
local function presence_members(list)
    return '"roomId":' .. cjson.encode(ARGV[4]) .. ',"isActive":' .. tostring(list ~= '[]') .. ',"activeUserIds":' .. list
end

-- Emits `room:presence {roomId, isActive, activeUserIds}` when the set of present users differs
-- from the last one announced (kept in the room hash), so expiries are announced too; users who
-- are gone get their read position closed.
local function announce_presence(now)
    local users = present_users(now)
    local list = #users == 0 and '[]' or cjson.encode(users)
    local announced = redis.call('HGET', KEYS[1], 'presence')
    if announced == list then
        return ''
    end
    close_reads(announced, users)
    redis.call('HSET', KEYS[1], 'presence', list)
    return emit_to(KEYS[4], KEYS[5], ARGV[3], 'room:presence', presence_members(list))
end
