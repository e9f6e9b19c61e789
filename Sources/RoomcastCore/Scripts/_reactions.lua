-- Reactions: one heart per user per element, kept in a hash next to the element:
--   room:{<roomId>}:element:<elementId>:reactions   user id → the reaction as client JSON
-- A reaction's JSON carries its `createdAt` (ISO 8601 UTC with milliseconds, which sorts as
-- text) and its `user`, so stats need no other key.

-- A user's current public profile as JSON, from the room's profiles hash `profiles`
-- (room:{<roomId>}:profiles, a declared key of every function with an element); `fallback` (a
-- copy stored with the element or reaction) when the room has none for them.
local function profile_json(profiles, user, fallback)
    local profile = redis.call('HGET', profiles, user)
    if profile then return profile end
    return fallback or 'null'
end

-- { count, reactor ids, top reactors JSON (the three most recent users) } of a reactions hash.
local function reaction_stats(key, profiles)
    local flat = redis.call('HGETALL', key)
    local entries, ids = {}, {}
    for i = 1, #flat, 2 do
        ids[#ids + 1] = flat[i]
        local reaction = cjson.decode(flat[i + 1])
        entries[#entries + 1] = { at = reaction.createdAt or '', id = flat[i], user = reaction.user }
    end
    table.sort(entries, function(a, b) return a.at > b.at end)
    local top = {}
    for i = 1, math.min(3, #entries) do
        top[i] = profile_json(profiles, entries[i].id, entries[i].user and cjson.encode(entries[i].user) or nil)
    end
    return #ids, ids, '[' .. table.concat(top, ',') .. ']'
end

-- The element's `reactions` as `viewer` sees them: null until the first reaction.
local function reactions_json(key, viewer, profiles)
    local count, _, top = reaction_stats(key, profiles)
    if count == 0 then return 'null' end
    local mine
    if type(viewer) == 'boolean' then
        mine = viewer
    else
        mine = viewer ~= nil and redis.call('HEXISTS', key, viewer) == 1
    end
    return '{"count":' .. count .. ',"hasReacted":' .. tostring(mine) .. ',"userReaction":'
        .. (mine and '"heart"' or 'null') .. ',"topReactors":' .. top .. '}'
end
