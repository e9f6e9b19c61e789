-- Deletes a device token's owner record only if it still names this user: the device may have
-- moved to another account meanwhile.
-- KEYS[1] push-token:{<token>}
-- ARGV[1] user id
-- Returns 1 if deleted, else 0.

if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
