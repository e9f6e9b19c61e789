-- owner_release: deletes an owner record (a string naming a user id) only if it still names this
-- user: a device token may have moved to another account meanwhile, an email may have been
-- claimed again.
--
-- KEYS[1] owner          push-token:{<token>} or email:{<address>}
-- KEYS[2] companion?     a record that goes with the owner's: push-token:{<token>}:installation
-- ARGV[1] user
-- REPLY released
--   released: 1 if deleted, else 0
register_write('owner_release', function(keys, args)
    local owner, companion = unpack(keys)
    local user = unpack(args)
    if redis.call('GET', owner) == user then
        if companion then redis.call('DEL', companion) end
        return { 'released', redis.call('DEL', owner) }
    end
    return { 'released', 0 }
end)
