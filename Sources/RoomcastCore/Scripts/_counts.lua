-- Unseen counts, shared by the functions that change what participants have not seen yet.

-- Users with an unexpired socket in the room (presence members '<userId>|<socketId>').
local function present_set(presence, now)
    local present = {}
    -- Exclusive, as in _presence.lua: a member expiring exactly now is gone.
    for _, member in ipairs(redis.call('ZRANGE', presence, '(' .. now, '+inf', 'BYSCORE')) do
        local user = string.match(member, '^([^|]+)|')
        if user then present[user] = true end
    end
    return present
end

-- Every participant with their unseen count: one more for each participant other than `actor`
-- who does not have the room open when `grow` is true. Returns { user, count, user, count … }
-- (a reply's `unseen` field).
local function unseen_counts(participants, presence, unseen, actor, now, grow)
    local present = grow and present_set(presence, now) or {}
    local result = {}
    for _, user in ipairs(redis.call('SMEMBERS', participants)) do
        local count
        if grow and user ~= actor and not present[user] then
            count = redis.call('HINCRBY', unseen, user, 1)
        else
            count = tonumber(redis.call('HGET', unseen, user) or '0')
        end
        result[#result + 1] = user
        result[#result + 1] = count
    end
    return result
end
