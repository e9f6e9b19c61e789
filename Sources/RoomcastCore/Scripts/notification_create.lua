-- notification_create: stores a notification for a user (or raises an existing one with the same
-- id again), counts it as unread and tells the user's sockets. The caller enqueues the push jobs
-- in the shared outboxes (one per platform, named in each device's record), which live in another
-- slot than the user's keys (Redis Cluster).
--
-- KEYS[1] user           user:{<userId>}
-- KEYS[2] notifications  user:{<userId>}:notifications (sorted set)
-- KEYS[3] data           user:{<userId>}:notifications:data (hash)
-- KEYS[4] unread         user:{<userId>}:notifications:unread (set)
-- KEYS[5] push_tokens    user:{<userId>}:push-tokens (hash)
-- KEYS[6] stream         user:{<userId>}:stream
-- KEYS[7] sockets        user:{<userId>}:sockets
-- ARGV[1] notification_id
-- ARGV[2] notification   its JSON (read: false)
-- ARGV[3] kept           notifications kept per user
-- ARGV[4] route          node-events:{<slot tag of the user's slot>}:
-- ARGV[5] user_id        <userId>
-- REPLY unread, devices
--   unread: the unread count after; devices: { device token, its record JSON, … } (HGETALL)
-- Errors: NOT_FOUND for an unknown user.
register_write('notification_create', function(keys, args)
    local user, notifications, data, unread, push_tokens, stream, sockets = unpack(keys)
    local notification_id, notification, kept, route, user_id = unpack(args)
    if redis.call('EXISTS', user) == 0 then
        error({ err = 'NOT_FOUND user not found' })
    end
    local seq = redis.call('HINCRBY', user, 'notificationSeq', 1)
    redis.call('ZADD', notifications, seq, notification_id)
    redis.call('HSET', data, notification_id, notification)
    redis.call('SADD', unread, notification_id)

    -- Oldest notifications beyond the limit go, read or not.
    local excess = redis.call('ZCARD', notifications) - tonumber(kept)
    if excess > 0 then
        local oldest = redis.call('ZPOPMIN', notifications, excess)
        for i = 1, #oldest, 2 do
            redis.call('HDEL', data, oldest[i])
            redis.call('SREM', unread, oldest[i])
        end
    end

    local count = redis.call('SCARD', unread)
    local target = user_target(stream, sockets, route, user_id)
    emit_user(target, 'notification:new', '"notification":' .. notification .. ',"unreadCount":' .. count)
    emit_user(target, 'badge:updated', '"unreadCount":' .. count)
    return { 'unread', count, 'devices', redis.call('HGETALL', push_tokens) }
end)
