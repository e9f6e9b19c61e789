-- push_token_claim: gives a device token to a user, unless the token is bound to an app
-- installation and this registration does not come from it. An app that sends its installation id
-- binds its token to it: the token then moves to another account only through that installation's
-- registration, so knowing a device token is not enough to take another user's pushes away.
-- Tokens registered without one (older apps) move on any registration, as before. The binding goes
-- with the owner record (owner_release.lua: the owner removed it, or APNs/FCM called it
-- unregistered).
--
-- KEYS[1] owner_key      push-token:{<token>}: the owner's user id
-- KEYS[2] installation_key push-token:{<token>}:installation: SHA-256 (hex) of the installation id
--                        it is bound to
-- ARGV[1] user
-- ARGV[2] installation   SHA-256 (hex) of the registering installation's id, '' when the app sent none
-- REPLY previous
--   previous: the previous owner ('' for none)
-- Errors: CONFLICT when the token is bound to another installation (or to one and this
-- registration names none) and does not already belong to this user.
register_write('push_token_claim', function(keys, args)
    local owner_key, installation_key = unpack(keys)
    local user, installation = unpack(args)
    local owner = redis.call('GET', owner_key)
    local bound = redis.call('GET', installation_key)
    if owner ~= user and bound and bound ~= installation then
        return redis.error_reply('CONFLICT this device token is registered by another installation of the app')
    end
    redis.call('SET', owner_key, user)
    if installation ~= '' then redis.call('SET', installation_key, installation) end
    return { 'previous', owner or '' }
end)
