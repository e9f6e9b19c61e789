-- A user's new socket counts against `socket.max_per_user`, over every node. Sockets of a dead
-- node are not closed by anyone: they expire, since only a live node refreshes its own.
-- KEYS[1] user:{<userId>}:sockets (sorted set, member socket id, score expiry ms)
-- KEYS[2] user:{<userId>}:stream (the user's event stream, _emit.lua)
-- KEYS[3] (optional) user:{<userId>} (the user's hash): read in the same call, so that a CONNECT
-- costs one round trip; a user without one is not counted.
-- ARGV[1] now (epoch ms), ARGV[2] expiry (epoch ms), ARGV[3] limit, ARGV[4] socket id
-- Returns { the number of sockets after this one, or -1 (and adds nothing) when over the limit, or
-- -2 (and adds nothing) when KEYS[3] is given and does not exist; the offset of the user's last
-- event ('0-0' when none): the node forwards the user's events after it, and reads back from there
-- what its pub/sub link misses; with KEYS[3], the user's fields (HGETALL) }.
local user
if KEYS[3] then
    user = redis.call('HGETALL', KEYS[3])
    if #user == 0 then
        return { -2, '0-0', user }
    end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[4]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
    return { -1, '0-0', user }
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
-- The key goes when its last socket would have expired.
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
return { redis.call('ZCARD', KEYS[1]), last[1] and last[1][1] or '0-0', user }
