-- Shared by the presence scripts (prepended when loaded). KEYS layout:
--   KEYS[1] room hash           room:{<roomId>}
--   KEYS[2] participants set    room:{<roomId>}:participants
--   KEYS[3] presence set        room:{<roomId>}:presence   (member '<userId>|<socketId>', score expiry ms)
--   KEYS[4] room event stream   room:{<roomId>}:stream
--   KEYS[5] room channel        room:{<roomId>}:events
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

-- Emits `room:presence {roomId, isActive, activeUserIds}` when the set of present users differs
-- from the last one announced (kept in the room hash), so expiries are announced too.
local function announce_presence(now)
    local users = present_users(now)
    local list = #users == 0 and '[]' or cjson.encode(users)
    if redis.call('HGET', KEYS[1], 'presence') == list then
        return ''
    end
    redis.call('HSET', KEYS[1], 'presence', list)
    return emit_to(KEYS[4], KEYS[5], ARGV[3], 'room:presence',
        '"roomId":' .. cjson.encode(ARGV[4]) .. ',"isActive":' .. tostring(#users > 0) .. ',"activeUserIds":' .. list)
end
