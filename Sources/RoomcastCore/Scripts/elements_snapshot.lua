-- The room's elements in z-order with the stream offset they are current at: one atomic read,
-- so a client that applies later events after this offset misses none and repeats none.
-- KEYS: the element layout of _shared.lua.
-- ARGV[1] user id, ARGV[2] element key prefix (room:{<roomId>}:element:)
-- Returns { offset ('0-0' for an empty stream), JSON array of elements, zIndex ascending }.
check_participant(ARGV[1])
local ids = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
local parts = {}
for i = 1, #ids, 2 do
    parts[#parts + 1] = element_json(ARGV[2] .. ids[i], ids[i + 1], ARGV[1])
end
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
local offset = last[1] and last[1][1] or '0-0'
return { offset, '[' .. table.concat(parts, ',') .. ']' }
