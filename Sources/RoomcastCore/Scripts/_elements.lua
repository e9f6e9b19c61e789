-- Helpers of the element functions. They take the room's keys in one order:
--   room           room:{<roomId>}                 the room hash
--   participants   room:{<roomId>}:participants
--   z_order        room:{<roomId>}:z               member element id, score zIndex
--   stream         room:{<roomId>}:stream          the room's events
--   channel        room:{<roomId>}:events          (a channel: see below)
--   element        room:{<roomId>}:element:<elementId>              (with an element, these
--   reactions      room:{<roomId>}:element:<elementId>:reactions     three too)
--   profiles       room:{<roomId>}:profiles
-- A function with an element declares every key it touches, derived ones included, as Redis
-- requires: on a cluster it checks declared keys before a function runs, but fails one halfway,
-- after its first writes, on an undeclared key missing from a migrating slot. Functions over all
-- of a room's elements (snapshot, clear) derive element keys from a prefix; they are safe too,
-- because the channel is declared and is never a key: while the room's slot migrates, Redis finds
-- a declared key missing and refuses every element function up front with TRYAGAIN.

local NUMBER_FIELDS = { positionX = true, positionY = true, width = true, height = true,
    rotation = true, scaleX = true, scaleY = true, duration = true }

-- Refuses anyone but a participant of an existing room.
local function check_participant(room, participants, user)
    if redis.call('SISMEMBER', participants, user) == 1 then return end
    if redis.call('EXISTS', room) == 0 then
        error({ err = 'NOT_FOUND room not found' })
    end
    error({ err = 'FORBIDDEN not a participant of this room' })
end

local function check_element(element)
    if redis.call('EXISTS', element) == 0 then
        error({ err = 'NOT_FOUND element not found' })
    end
end

-- The next zIndex of the room: a counter, so no two elements ever share one.
local function next_z(room)
    return redis.call('HINCRBY', room, 'zCounter', 1)
end

-- Puts an element on top unless it already is; returns its zIndex and whether it moved. The
-- top and its score in one call: a drag moves the element on top again and again.
local function bring_to_front(room, z_order, id)
    local top = redis.call('ZREVRANGE', z_order, 0, 0, 'WITHSCORES')
    if top[1] == id then
        return tonumber(top[2]), false
    end
    local z = next_z(room)
    redis.call('ZADD', z_order, z, id)
    return z, true
end

local function touch(room, now)
    redis.call('HSET', room, 'updatedAt', now)
end

-- One `"name":value` JSON member of an element field. Numbers are spliced as stored: the
-- caller wrote them as the shortest text that round-trips a double (valid JSON), whereas cjson
-- would print them with 14 significant digits and change what the client sent.
local function is_json_number(text)
    return string.match(text, '^%-?%d+$') or string.match(text, '^%-?%d+%.%d+$')
        or string.match(text, '^%-?%d+[eE][-+]?%d+$') or string.match(text, '^%-?%d+%.%d+[eE][-+]?%d+$')
end

local function json_member(name, value)
    if NUMBER_FIELDS[name] then
        if not is_json_number(value) then
            value = cjson.encode(tonumber(value))
        end
        return cjson.encode(name) .. ':' .. value
    end
    return cjson.encode(name) .. ':' .. cjson.encode(value)
end

-- An element hash as client JSON: numbers as numbers, the creator referenced by id (`createdBy`)
-- and their current public profile taken from the room's `profiles` (profile_json,
-- _reactions.lua). `viewer` is the user whose `reactions.hasReacted` it shows, or a boolean to
-- set it outright.
local function element_json(key, z, viewer, profiles)
    local flat = redis.call('HGETALL', key)
    local members = {}
    local creator_id, stored = nil, nil
    for i = 1, #flat, 2 do
        local name, value = flat[i], flat[i + 1]
        if name == 'creator' then
            -- A copy written by an older version: shown only when the room has no profile.
            stored = value
        else
            if name == 'createdBy' then creator_id = value end
            members[#members + 1] = json_member(name, value)
        end
    end
    local creator = creator_id and profile_json(profiles, creator_id, stored) or (stored or 'null')
    return '{' .. table.concat(members, ',') .. ',"zIndex":' .. z .. ',"creator":' .. creator .. ',"reactions":'
        .. reactions_json(key .. ':reactions', viewer, profiles) .. '}'
end

-- The room's elements in z-order as a JSON array, as `viewer` sees them.
local function elements_json(z_order, element_prefix, viewer, profiles)
    local ids = redis.call('ZRANGE', z_order, 0, -1, 'WITHSCORES')
    local parts = {}
    for i = 1, #ids, 2 do
        parts[#parts + 1] = element_json(element_prefix .. ids[i], ids[i + 1], viewer, profiles)
    end
    return '[' .. table.concat(parts, ',') .. ']'
end

local function quoted(text)
    return cjson.encode(text)
end
