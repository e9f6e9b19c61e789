-- room_replay: the room events a client missed after `since`, for recovery on rejoin, when they
-- are all still in the stream; else (trimmed, an offset from elsewhere, or too many) the client
-- needs a fresh snapshot instead.
--
-- KEYS[1] room           room:{<roomId>}
-- KEYS[2] participants   room:{<roomId>}:participants
-- KEYS[3] stream         room:{<roomId>}:stream
-- ARGV[1] user
-- ARGV[2] since          an offset, `<ms>-<seq>`
-- ARGV[3] most           the most events to replay
-- REPLY offset?, entries?
--   both missing when the events cannot all be replayed; else offset: the last event's (since
--   itself when none), entries: each `[id, [field, value, …]]` as XRANGE gives it
-- Errors: NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.

-- { ms, seq } of an offset, nil for anything else.
local function parse_offset(id)
    local ms, seq = string.match(id, '^(%d+)-(%d+)$')
    if not ms or #ms > 15 or #seq > 15 then return nil end
    return { tonumber(ms), tonumber(seq) }
end

local function offset_before(a, b)
    return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2])
end

register_read('room_replay', function(keys, args)
    local room, participants, stream = unpack(keys)
    local user, since, most = unpack(args)
    if redis.call('SISMEMBER', participants, user) == 0 then
        if redis.call('EXISTS', room) == 0 then
            error({ err = 'NOT_FOUND room not found' })
        end
        error({ err = 'FORBIDDEN not a participant of this room' })
    end
    local from = parse_offset(since)
    if not from then return {} end
    local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
    if not last then
        -- No event yet: only the offset of an empty room is current.
        if from[1] == 0 and from[2] == 0 then return { 'offset', since, 'entries', {} } end
        return {}
    end
    if offset_before(parse_offset(last[1]), from) then return {} end
    local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
    if offset_before(from, parse_offset(first[1])) then
        -- Older than the first event kept: whole only if the stream never lost an entry.
        local info = redis.call('XINFO', 'STREAM', stream)
        local length, added
        for i = 1, #info, 2 do
            if info[i] == 'length' then length = info[i + 1] end
            if info[i] == 'entries-added' then added = info[i + 1] end
        end
        if length ~= added then return {} end
    end
    local entries = redis.call('XRANGE', stream, '(' .. since, '+', 'COUNT', tonumber(most) + 1)
    if #entries > tonumber(most) then return {} end
    return { 'offset', #entries > 0 and entries[#entries][1] or since, 'entries', entries }
end)
