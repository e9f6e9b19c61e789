-- How every per-user event is appended to the user's event stream and published on the user's
-- channel in one atomic step (prepended to the scripts that emit per-user events), so a node whose
-- pub/sub link was down reads back what it missed, as for rooms.
-- The stream (user:{<userId>}:stream) is a declared key of every script that calls this, and
-- the channel (user:{<userId>}:events, same slot) an argument: a channel is never a key, and
-- Redis Cluster answers TRYAGAIN to a script whose declared keys are partly missing while their
-- slot migrates, and refuses undeclared keys. The stream keeps about USER_EVENTS_KEPT events and
-- expires a day after the last one.
local USER_EVENTS_KEPT = 200
local USER_EVENTS_TTL_MS = 86400000

-- Appends `frame` (a complete Socket.IO event frame) and publishes `<offset> <frame>`.
-- Returns the offset.
local function emit_user(stream_key, channel, frame)
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', USER_EVENTS_KEPT, '*', 'f', frame)
    redis.call('PEXPIRE', stream_key, USER_EVENTS_TTL_MS)
    redis.call('SPUBLISH', channel, offset .. ' ' .. frame)
    return offset
end
