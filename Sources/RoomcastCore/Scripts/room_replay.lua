-- The room events a client missed after `since`, for recovery on rejoin; false when they are not
-- all still in the stream (trimmed, an offset from elsewhere, or too many), and the client needs
-- a fresh snapshot instead.
-- KEYS[1] room hash, KEYS[2] participants set, KEYS[3] room event stream
-- ARGV[1] user id, ARGV[2] since (an offset, `<ms>-<seq>`), ARGV[3] most events to replay
-- Returns false, or { offset of the last event (since itself when none), entry, entry … } with
-- each entry `[id, [field, value, …]]` as XRANGE gives it.

if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
    if redis.call('EXISTS', KEYS[1]) == 0 then
        error({ err = 'NOT_FOUND room not found' })
    end
    error({ err = 'FORBIDDEN not a participant of this room' })
end

local function parse(id)
    local ms, seq = string.match(id, '^(%d+)-(%d+)$')
    if not ms or #ms > 15 or #seq > 15 then return nil end
    return { tonumber(ms), tonumber(seq) }
end
local function before(a, b)
    return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2])
end

local since = parse(ARGV[2])
if not since then return false end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
if not last then
    -- No event yet: only the offset of an empty room is current.
    if since[1] == 0 and since[2] == 0 then return { ARGV[2] } end
    return false
end
if before(parse(last[1]), since) then return false end
local first = redis.call('XRANGE', KEYS[3], '-', '+', 'COUNT', 1)[1]
if before(since, parse(first[1])) then
    -- Older than the first event kept: whole only if the stream never lost an entry.
    local info = redis.call('XINFO', 'STREAM', KEYS[3])
    local length, added
    for i = 1, #info, 2 do
        if info[i] == 'length' then length = info[i + 1] end
        if info[i] == 'entries-added' then added = info[i + 1] end
    end
    if length ~= added then return false end
end
local entries = redis.call('XRANGE', KEYS[3], '(' .. ARGV[2], '+', 'COUNT', tonumber(ARGV[3]) + 1)
if #entries > tonumber(ARGV[3]) then return false end
local result = { #entries > 0 and entries[#entries][1] or ARGV[2] }
for _, entry in ipairs(entries) do
    result[#result + 1] = entry
end
return result
