-- user_sockets_reap: a dead node's sockets stop counting against their user's `socket.max_per_user`.
--
-- KEYS[1] sockets        user:{<userId>}:sockets (sorted set, member socket id, score expiry ms)
-- ARGV[1] node           the dead node's id: its socket ids start with it (EngineIOSessionID.swift)
-- REPLY removed
register_write('user_sockets_reap', function(keys, args)
    local sockets = unpack(keys)
    local node = unpack(args)
    local removed = 0
    for _, socket in ipairs(redis.call('ZRANGE', sockets, 0, -1)) do
        if string.sub(socket, 1, #node) == node then
            redis.call('ZREM', sockets, socket)
            removed = removed + 1
        end
    end
    return { 'removed', removed }
end)
