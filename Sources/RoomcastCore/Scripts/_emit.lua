-- The only Lua that writes event frames and pub/sub envelopes, for every function that emits an
-- event. The Swift side of the contract is RoomcastCore/Events (`ServerEvent`, `EventEnvelope`,
-- `RoomEventFrame`); EventContractTests runs every emitting function and decodes what it
-- published with the SocketIO codec.
--
-- Room events are appended to the room's stream and published on its channel in the same atomic
-- step as the change. The offset is the stream entry id; the frame is stored split around it
-- (`p`, `s`) so a replay rebuilds exactly what was published. Per-user events go to the user's
-- own stream and channel the same way (`f`: the whole frame).

-- `42["<event>",{<members>` : a Socket.IO event frame up to its object's last member.
local function event_head(event, members)
    return '42["' .. event .. '",{' .. members
end

-- A whole frame, for one socket (not stored, not published).
local function event_frame(event, members)
    return event_head(event, members) .. '}]'
end

-- Appends a room event given as the frame before (`p`) and after (`s`) its offset, and publishes
-- `<offset> <frame>`. Returns the offset. For frames encoded by Swift (`RoomEventFrame`).
local function emit_frame_to(stream_key, channel_key, kept, p, s)
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', kept, '*', 'p', p, 's', s)
    redis.call('SPUBLISH', channel_key, offset .. ' ' .. p .. offset .. s)
    return offset
end

-- Appends and publishes room event `event`; `members` are the JSON object's members without
-- braces, the offset is added as the last one. Returns the offset.
local function emit_to(stream_key, channel_key, kept, event, members)
    return emit_frame_to(stream_key, channel_key, kept, event_head(event, members) .. ',"offset":"', '"}]')
end

-- Appends a room event that differs per recipient and publishes it: users in `ids` get the frame
-- built with `members_for(true)`, everyone else `members_for(false)`. The published payload is
-- `<offset> @<id>,<id>… <length of the first frame> <first frame><second frame>`.
local function emit_per_user(stream_key, channel_key, kept, event, ids, members_for)
    local pa = event_head(event, members_for(true)) .. ',"offset":"'
    local pb = event_head(event, members_for(false)) .. ',"offset":"'
    local s = '"}]'
    local users = table.concat(ids, ',')
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', kept, '*', 'pa', pa, 'pb', pb, 's', s, 'u', users)
    local a = pa .. offset .. s
    redis.call('SPUBLISH', channel_key, offset .. ' @' .. users .. ' ' .. #a .. ' ' .. a .. pb .. offset .. s)
    return offset
end

-- A user's stream keeps about USER_EVENTS_KEPT events and expires a day after the last one. The
-- stream (user:{<userId>}:stream) is a declared key of every function that emits per-user events,
-- and the channel (user:{<userId>}:events, same slot) an argument: a channel is never a key, and
-- Redis Cluster answers TRYAGAIN to a function whose declared keys are partly missing while their
-- slot migrates, and refuses undeclared keys.
local USER_EVENTS_KEPT = 200
local USER_EVENTS_TTL_MS = 86400000

-- Appends a complete per-user event frame to the user's stream and publishes `<offset> <frame>`.
-- Returns the offset. For frames encoded by Swift (`UserEvents`).
local function emit_user_frame(stream_key, channel, frame)
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', USER_EVENTS_KEPT, '*', 'f', frame)
    redis.call('PEXPIRE', stream_key, USER_EVENTS_TTL_MS)
    redis.call('SPUBLISH', channel, offset .. ' ' .. frame)
    return offset
end

-- Appends and publishes per-user event `event` with the object's `members` (without braces).
local function emit_user(stream_key, channel, event, members)
    return emit_user_frame(stream_key, channel, event_frame(event, members))
end
