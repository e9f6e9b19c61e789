-- notification_read: marks one notification read. Reading it again changes nothing: SREM removes
-- it once, so the badge stays exact under repeated and concurrent reads; `badge:updated` is
-- published on a change.
--
-- KEYS[1] notifications  user:{<userId>}:notifications
-- KEYS[2] unread         user:{<userId>}:notifications:unread
-- KEYS[3] stream         user:{<userId>}:stream
-- KEYS[4] sockets        user:{<userId>}:sockets
-- ARGV[1] notification_id
-- ARGV[2] route          node-events:{<slot tag of the user's slot>}:
-- ARGV[3] user_id        <userId>
-- REPLY changed, unread
--   changed: 1 if it was unread until now; unread: the unread count after
-- Errors: NOT_FOUND for a notification the user does not have.
register_write('notification_read', function(keys, args)
    local notifications, unread, stream, sockets = unpack(keys)
    local notification_id, route, user_id = unpack(args)
    if not redis.call('ZSCORE', notifications, notification_id) then
        error({ err = 'NOT_FOUND notification not found' })
    end
    local removed = redis.call('SREM', unread, notification_id)
    local count = redis.call('SCARD', unread)
    if removed == 1 then
        emit_user(user_target(stream, sockets, route, user_id), 'badge:updated', '"unreadCount":' .. count)
    end
    return { 'changed', removed, 'unread', count }
end)
