-- The only Lua that writes event frames and pub/sub envelopes, for every function that emits an
-- event. The Swift side of the contract is RoomcastCore/Events (`ServerEvent`, `EventEnvelope`,
-- `RoomEventFrame`); EventContractTests runs every emitting function and decodes what it
-- published with the SocketIO codec.
--
-- Room events are appended to the room's stream and published on its channel in the same atomic
-- step as the change. The offset is the stream entry id; the frame is stored split around it
-- (`p`, `s`) so a replay rebuilds exactly what was published. Per-user events go to the user's
-- own stream and channel the same way (`f`: the whole frame).

-- What follows the offset in every room event frame: the offset's closing quote, then the
-- object's and the array's (`RoomEventFrame.suffix`).
local FRAME_SUFFIX = '"}]'

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
    return emit_frame_to(stream_key, channel_key, kept, event_head(event, members) .. ',"offset":"', FRAME_SUFFIX)
end

-- Appends a room event that differs per recipient and publishes it: users in `ids` get the frame
-- built with `members_for(true)`, everyone else `members_for(false)`. The published payload is
-- `<offset> @<id>,<id>… <length of the first frame> <first frame><second frame>`.
local function emit_per_user(stream_key, channel_key, kept, event, ids, members_for)
    local pa = event_head(event, members_for(true)) .. ',"offset":"'
    local pb = event_head(event, members_for(false)) .. ',"offset":"'
    local s = FRAME_SUFFIX
    local users = table.concat(ids, ',')
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', kept, '*', 'pa', pa, 'pb', pb, 's', s, 'u', users)
    local a = pa .. offset .. s
    redis.call('SPUBLISH', channel_key, offset .. ' @' .. users .. ' ' .. #a .. ' ' .. a .. pb .. offset .. s)
    return offset
end

-- A user's stream keeps about USER_EVENTS_KEPT events and expires a day after the last one.
--
-- A user's events are published to the nodes holding the user's sockets, not on a channel of the
-- user's own (a node would subscribe one per connected user): each node has one channel per slot,
-- `node-events:{<slot tag>}:<nodeId>` (one on a single server), subscribed for its first user
-- routed to it and kept, and an event goes to each node found
-- in the user's sockets (a socket id is its node's id followed by 20 random characters) on that
-- node's channel of the user's slot, so on the user's shard. The payload is
-- `<userId> <offset> <frame>`.
--
-- A function emitting per-user events declares the stream (user:{<userId>}:stream) and the
-- sockets (user:{<userId>}:sockets) as keys and takes a `user` argument: { stream, sockets, route,
-- id }, where `route` is the channel's name up to the node id for the user's slot. A channel is
-- never a key: Redis Cluster answers TRYAGAIN to a function whose declared keys are partly missing
-- while their slot migrates, and refuses undeclared keys.
local USER_EVENTS_KEPT = 200
local USER_EVENTS_TTL_MS = 86400000

-- The target of a user's events, from the function's declared keys and arguments.
local function user_target(stream_key, sockets_key, route, user_id)
    return { stream = stream_key, sockets = sockets_key, route = route, id = user_id }
end

-- Publishes `payload` (`<offset> <frame>`) once to every node holding one of the user's sockets.
local function publish_to_user_nodes(user, payload)
    local sent = {}
    for _, socket in ipairs(redis.call('ZRANGE', user.sockets, 0, -1)) do
        local node = string.sub(socket, 1, #socket - 20)
        if not sent[node] then
            sent[node] = true
            redis.call('SPUBLISH', user.route .. node, user.id .. ' ' .. payload)
        end
    end
end

-- Appends a complete per-user event frame to the user's stream and publishes it. Returns the
-- offset. For frames encoded by Swift (`UserEvents`).
local function emit_user_frame(user, frame)
    local offset = redis.call('XADD', user.stream, 'MAXLEN', '~', USER_EVENTS_KEPT, '*', 'f', frame)
    redis.call('PEXPIRE', user.stream, USER_EVENTS_TTL_MS)
    publish_to_user_nodes(user, offset .. ' ' .. frame)
    return offset
end

-- Appends and publishes per-user event `event` with the object's `members` (without braces).
local function emit_user(user, event, members)
    return emit_user_frame(user, event_frame(event, members))
end

-- The offset of a stream's last entry, '0-0' when it has none.
local function last_offset(stream_key)
    local last = redis.call('XREVRANGE', stream_key, '+', '-', 'COUNT', 1)[1]
    return last and last[1] or '0-0'
end

-- { ms, seq } of an offset, nil for anything else.
local function parse_offset(id)
    local ms, seq = string.match(id, '^(%d+)-(%d+)$')
    if not ms or #ms > 15 or #seq > 15 then return nil end
    return { tonumber(ms), tonumber(seq) }
end

local function offset_before(a, b)
    return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2])
end

-- The room events after `since` for a client catching up, when the stream still has them all and
-- they are at most `most`: returns the last one's offset (`since` itself when none) and the
-- entries as XRANGE gives them; nil otherwise (trimmed, an offset from elsewhere, too many), when
-- the client needs a fresh snapshot instead.
local function replayable(stream_key, since, most)
    local from = parse_offset(since)
    if not from then return nil end
    local last = last_offset(stream_key)
    if last == '0-0' then
        -- No event yet: only the offset of an empty room is current.
        if from[1] == 0 and from[2] == 0 then return since, {} end
        return nil
    end
    if offset_before(parse_offset(last), from) then return nil end
    local first = redis.call('XRANGE', stream_key, '-', '+', 'COUNT', 1)[1]
    if offset_before(from, parse_offset(first[1])) then
        -- Older than the first event kept: whole only if the stream never lost an entry.
        local info = redis.call('XINFO', 'STREAM', stream_key)
        local length, added
        for i = 1, #info, 2 do
            if info[i] == 'length' then length = info[i + 1] end
            if info[i] == 'entries-added' then added = info[i + 1] end
        end
        if length ~= added then return nil end
    end
    local entries = redis.call('XRANGE', stream_key, '(' .. since, '+', 'COUNT', most + 1)
    if #entries > most then return nil end
    return #entries > 0 and entries[#entries][1] or since, entries
end
