-- notification_read_all: marks every notification of a user read and tells all the user's sockets
-- the badge is 0.
--
-- KEYS[1] unread         user:{<userId>}:notifications:unread
-- KEYS[2] stream         user:{<userId>}:stream
-- KEYS[3] sockets        user:{<userId>}:sockets
-- ARGV[1] route          node-events:{<slot tag of the user's slot>}:
-- ARGV[2] user_id        <userId>
-- REPLY unread
--   unread: how many were unread
register_write('notification_read_all', function(keys, args)
    local unread, stream, sockets = unpack(keys)
    local route, user_id = unpack(args)
    local count = redis.call('SCARD', unread)
    redis.call('DEL', unread)
    emit_user(user_target(stream, sockets, route, user_id), 'badge:updated', '"unreadCount":0')
    return { 'unread', count }
end)
