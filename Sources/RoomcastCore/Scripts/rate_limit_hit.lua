-- rate_limit_hit.lua: counts one request against a fixed window shared by every node.
--
-- KEYS[1]  ratelimit:{<scope>:<id>}   string counter, expiring with its window
-- ARGV[1]  limit: requests allowed per window
-- ARGV[2]  window, in milliseconds
--
-- Returns {allowed (1 or 0), milliseconds until the window ends}.
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
if count > tonumber(ARGV[1]) then
  return {0, ttl}
end
return {1, ttl}
