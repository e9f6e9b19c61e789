-- user_socket_open: a user's new socket counts against `socket.max_per_user`, over every node.
-- Sockets of a dead node are not closed by anyone: a reaper takes them out, or they expire.
--
-- KEYS[1] sockets        user:{<userId>}:sockets (sorted set, member socket id, score expiry ms)
-- KEYS[2] stream         user:{<userId>}:stream (the user's event stream, _emit.lua)
-- KEYS[3] user_key?      user:{<userId>} (the user's hash): read in the same call, so that a
--                        CONNECT costs one round trip; a user without one is not counted
-- ARGV[1] now            epoch ms
-- ARGV[2] expiry         epoch ms: the socket's backstop
-- ARGV[3] limit          most sockets per user
-- ARGV[4] socket         the socket id
-- REPLY outcome, offset, count?, user?
--   outcome: 'counted', 'over_limit' (nothing added) or 'no_user' (with the user key: it does not
--   exist, nothing added); offset: the user's last event ('0-0' when none): the node forwards the
--   user's events after it, and reads back from there what its pub/sub link misses; count: the
--   user's sockets with this one; user: the user's fields (HGETALL), with the user key
register_write('user_socket_open', function(keys, args)
    local sockets, stream, user_key = unpack(keys)
    local now, expiry, limit, socket = unpack(args)
    local user
    if user_key then
        user = redis.call('HGETALL', user_key)
        if #user == 0 then
            return { 'outcome', 'no_user', 'offset', '0-0' }
        end
    end
    redis.call('ZREMRANGEBYSCORE', sockets, '-inf', now)
    local offset = last_offset(stream)
    if not redis.call('ZSCORE', sockets, socket) and redis.call('ZCARD', sockets) >= tonumber(limit) then
        return { 'outcome', 'over_limit', 'offset', offset }
    end
    redis.call('ZADD', sockets, expiry, socket)
    -- The key goes when its last socket would have expired.
    redis.call('PEXPIREAT', sockets, expiry)
    local reply = { 'outcome', 'counted', 'offset', offset, 'count', redis.call('ZCARD', sockets) }
    if user then
        reply[#reply + 1] = 'user'
        reply[#reply + 1] = user
    end
    return reply
end)
