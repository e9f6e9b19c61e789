-- rate_limit_hit: counts one request against a fixed window shared by every node.
--
-- KEYS[1] counter        ratelimit:{<scope>:<id>}: a string counter, expiring with its window
-- ARGV[1] limit          requests allowed per window
-- ARGV[2] window         milliseconds
-- REPLY allowed, remaining
--   allowed: 1 or 0; remaining: milliseconds until the window ends
register_write('rate_limit_hit', function(keys, args)
    local counter = unpack(keys)
    local limit, window = unpack(args)
    local count = redis.call('INCR', counter)
    local ttl = redis.call('PTTL', counter)
    if ttl < 0 then
        redis.call('PEXPIRE', counter, window)
        ttl = tonumber(window)
    end
    return { 'allowed', count > tonumber(limit) and 0 or 1, 'remaining', ttl }
end)
