-- A dead node's sockets stop counting against their user's `socket.max_per_user`.
-- KEYS[1] user:{<userId>}:sockets (sorted set, member socket id, score expiry ms)
-- ARGV[1] the dead node's id: its socket ids start with it (EngineIOSessionID.swift).
-- Returns the number of sockets removed.
local removed = 0
for _, socket in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if string.sub(socket, 1, #ARGV[1]) == ARGV[1] then
        redis.call('ZREM', KEYS[1], socket)
        removed = removed + 1
    end
end
return removed
