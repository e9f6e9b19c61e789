-- Unseen counts, shared by the scripts that change what participants have not seen yet.

-- Users with an unexpired socket in the room (presence members '<userId>|<socketId>').
local function present_set(presence_key, now)
    local present = {}
    -- Exclusive, as in _presence.lua: a member expiring exactly now is gone.
    for _, member in ipairs(redis.call('ZRANGE', presence_key, '(' .. now, '+inf', 'BYSCORE')) do
        local user = string.match(member, '^([^|]+)|')
        if user then present[user] = true end
    end
    return present
end

-- Every participant with their unseen count: one more for each participant other than `actor`
-- who does not have the room open when `grow` is true. Returns { user, count, user, count … }.
local function unseen_counts(participants_key, presence_key, unseen_key, actor, now, grow)
    local present = grow and present_set(presence_key, now) or {}
    local result = {}
    for _, user in ipairs(redis.call('SMEMBERS', participants_key)) do
        local count
        if grow and user ~= actor and not present[user] then
            count = redis.call('HINCRBY', unseen_key, user, 1)
        else
            count = tonumber(redis.call('HGET', unseen_key, user) or '0')
        end
        result[#result + 1] = user
        result[#result + 1] = count
    end
    return result
end

-- Appends `items` to `list` (Lua 5.1 has no table.move).
local function append_all(list, items)
    for _, item in ipairs(items) do list[#list + 1] = item end
    return list
end
