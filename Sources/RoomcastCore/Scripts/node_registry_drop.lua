-- A fully reaped node leaves the registry, unless it heartbeat meanwhile.
-- KEYS[1] nodes:{registry}. ARGV[1] now (epoch ms), ARGV[2] the node's id.
-- Returns 1 when it was removed, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
if score and tonumber(score) < tonumber(ARGV[1]) then
    return redis.call('ZREM', KEYS[1], ARGV[2])
end
return 0
