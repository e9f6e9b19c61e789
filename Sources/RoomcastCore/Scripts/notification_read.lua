-- Marks one notification read. Reading it again changes nothing: SREM removes it once, so the
-- badge stays exact under repeated and concurrent reads.
-- KEYS[1] notifications sorted set, KEYS[2] unread set, KEYS[3] user stream
-- ARGV[1] notification id, ARGV[2] user channel
-- Returns { 1 if it was unread until now else 0, unread count }; publishes `badge:updated` on a change.

if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    error({ err = 'NOT_FOUND notification not found' })
end
local removed = redis.call('SREM', KEYS[2], ARGV[1])
local unread = redis.call('SCARD', KEYS[2])
if removed == 1 then
    emit_user(KEYS[3], ARGV[2], 'badge:updated', '"unreadCount":' .. unread)
end
return { removed, unread }
