-- Deletes an owner record (a string naming a user id) only if it still names this user: a device
-- token may have moved to another account meanwhile, an email may have been claimed again.
-- KEYS[1] push-token:{<token>} or email:{<address>}
-- KEYS[2] (optional) a record that goes with the owner's: push-token:{<token>}:installation
-- ARGV[1] user id
-- Returns 1 if deleted, else 0.

if redis.call('GET', KEYS[1]) == ARGV[1] then
    if KEYS[2] then redis.call('DEL', KEYS[2]) end
    return redis.call('DEL', KEYS[1])
end
return 0
