-- Gives a device token to a user, unless the token is bound to an app installation and this
-- registration does not come from it. An app that sends its installation id binds its token to
-- it: the token then moves to another account only through that installation's registration, so
-- knowing a device token is not enough to take another user's pushes away. Tokens registered
-- without one (older apps) move on any registration, as before. The binding goes with the owner
-- record (owner_release.lua: the owner removed it, or APNs/FCM called it unregistered).
-- KEYS[1] push-token:{<token>}               the owner's user id
-- KEYS[2] push-token:{<token>}:installation  SHA-256 (hex) of the installation id it is bound to
-- ARGV[1] user id
-- ARGV[2] SHA-256 (hex) of the registering installation's id, or '' when the app sent none
-- Returns the previous owner ('' for none); error CONFLICT when the token is bound to another
-- installation (or to one and this registration names none) and does not already belong to this user.
local owner = redis.call('GET', KEYS[1])
local bound = redis.call('GET', KEYS[2])
if owner ~= ARGV[1] and bound and bound ~= ARGV[2] then
    return redis.error_reply('CONFLICT this device token is registered by another installation of the app')
end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2]) end
return owner or ''
