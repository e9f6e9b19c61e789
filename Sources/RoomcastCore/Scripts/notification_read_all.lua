-- Marks every notification of a user read and tells all the user's sockets the badge is 0.
-- KEYS[1] unread set, KEYS[2] user stream
-- ARGV[1] user channel
-- Returns how many were unread.

local unread = redis.call('SCARD', KEYS[1])
redis.call('DEL', KEYS[1])
emit_user(KEYS[2], ARGV[1], 'badge:updated', '"unreadCount":0')
return unread
