-- Stores a notification for a user (or raises an existing one with the same id again), counts it
-- as unread and tells the user's sockets.
-- KEYS[1] user hash, KEYS[2] notifications sorted set, KEYS[3] notification data hash,
-- KEYS[4] unread set, KEYS[5] push tokens hash, KEYS[6] user stream
-- ARGV[1] notification id, ARGV[2] notification JSON (read: false), ARGV[3] notifications kept,
-- ARGV[4] user channel
-- Returns { unread count, device token, its record JSON, device token, its record JSON, ... }: the
-- caller enqueues the push jobs in the shared outboxes (one per platform, named in the record),
-- which live in another slot than the user's keys (Redis Cluster).

if redis.call('EXISTS', KEYS[1]) == 0 then
    error({ err = 'NOT_FOUND user not found' })
end
local seq = redis.call('HINCRBY', KEYS[1], 'notificationSeq', 1)
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[4], ARGV[1])

-- Oldest notifications beyond the limit go, read or not.
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if excess > 0 then
    local oldest = redis.call('ZPOPMIN', KEYS[2], excess)
    for i = 1, #oldest, 2 do
        redis.call('HDEL', KEYS[3], oldest[i])
        redis.call('SREM', KEYS[4], oldest[i])
    end
end

local unread = redis.call('SCARD', KEYS[4])
emit_user(KEYS[6], ARGV[4], 'notification:new', '"notification":' .. ARGV[2] .. ',"unreadCount":' .. unread)
emit_user(KEYS[6], ARGV[4], 'badge:updated', '"unreadCount":' .. unread)

local reply = redis.call('HGETALL', KEYS[5])
table.insert(reply, 1, unread)
return reply
