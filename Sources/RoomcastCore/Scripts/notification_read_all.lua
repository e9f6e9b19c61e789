-- notification_read_all: marks every notification of a user read and tells all the user's sockets
-- the badge is 0.
--
-- KEYS[1] unread         user:{<userId>}:notifications:unread
-- KEYS[2] stream         user:{<userId>}:stream
-- ARGV[1] channel        user:{<userId>}:events
-- REPLY unread
--   unread: how many were unread
register_write('notification_read_all', function(keys, args)
    local unread, stream = unpack(keys)
    local channel = unpack(args)
    local count = redis.call('SCARD', unread)
    redis.call('DEL', unread)
    emit_user(stream, channel, 'badge:updated', '"unreadCount":0')
    return { 'unread', count }
end)
