-- reaction_toggle: adds the user's heart to an element, or removes it if it is there, and emits
-- `element:reaction:added {elementId, reaction, stats}` or `element:reaction:removed {elementId,
-- userId, stats}` whose `stats.hasReacted` is right for each recipient.
--
-- KEYS[1] room           the element keys of _elements.lua
-- KEYS[2] participants
-- KEYS[3] z_order
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] element
-- KEYS[7] reactions
-- KEYS[8] profiles
-- KEYS[9] request?       the request key (_request.lua), when the client sent a request id
-- ARGV[1] user
-- ARGV[2] element_id
-- ARGV[3] room_id
-- ARGV[4] now            epoch ms
-- ARGV[5] events_kept
-- ARGV[6] reaction_draft the new reaction as a JSON object without `createdAt` (used when adding;
--                        this function adds `createdAt`)
-- REPLY action, reaction, count, topReactors, offset, creator, elementType, roomName, replayed?
--   action: 'added' or 'removed'; creator, elementType, roomName: the element's creator and type
--   and the room's name, for the caller to notify the creator
local REACTION_TOGGLE_RECORD = { 'action', 'reaction', 'count', 'topReactors', 'offset', 'creator', 'elementType', 'roomName' }

-- Epoch ms of `YYYY-MM-DDTHH:MM:SS.mmmZ` (days from civil date, proleptic Gregorian), nil otherwise.
local function iso_to_ms(text)
    if type(text) ~= 'string' then return nil end
    local y, mo, d, h, mi, s, ms = string.match(text, '^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.(%d%d%d)Z$')
    if not y then return nil end
    y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
    if mo <= 2 then y = y - 1 end
    local era = math.floor(y / 400)
    local yoe = y - era * 400
    local doy = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + d - 1
    local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
    local days = era * 146097 + doe - 719468
    return ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(s) * 1000 + tonumber(ms)
end

-- The inverse of iso_to_ms.
local function ms_to_iso(t)
    local days = math.floor(t / 86400000)
    local rest = t - days * 86400000
    local z = days + 719468
    local era = math.floor(z / 146097)
    local doe = z - era * 146097
    local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
    local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
    local mp = math.floor((5 * doy + 2) / 153)
    local d = doy - math.floor((153 * mp + 2) / 5) + 1
    local m = mp < 10 and mp + 3 or mp - 9
    local y = yoe + era * 400 + (m <= 2 and 1 or 0)
    local h = math.floor(rest / 3600000)
    local mi = math.floor((rest % 3600000) / 60000)
    local s = math.floor((rest % 60000) / 1000)
    return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d, h, mi, s, rest % 1000)
end

register_write('reaction_toggle', function(keys, args)
    local room, participants, _, stream, channel, element, reactions, profiles, request = unpack(keys)
    local user, element_id, room_id, now, events_kept, reaction_draft = unpack(args)
    check_participant(room, participants, user)
    local earlier = recorded_reply(request, REACTION_TOGGLE_RECORD)
    if earlier then return earlier end
    check_element(element)
    local action, reaction
    if redis.call('HEXISTS', reactions, user) == 1 then
        action, reaction = 'removed', redis.call('HGET', reactions, user)
        redis.call('HDEL', reactions, user)
    else
        -- `createdAt` orders reactors (topReactors, newest first), so it follows the order in which
        -- toggles are applied here: later than every reaction already on the element, even when two
        -- land in the same millisecond or come from nodes whose clocks differ.
        local at = tonumber(now)
        for _, value in ipairs(redis.call('HVALS', reactions)) do
            local existing = iso_to_ms(cjson.decode(value).createdAt)
            if existing and existing >= at then at = existing + 1 end
        end
        action, reaction = 'added', '{"createdAt":' .. quoted(ms_to_iso(at)) .. ',' .. string.sub(reaction_draft, 2)
        redis.call('HSET', reactions, user, reaction)
    end
    local count, ids, top = reaction_stats(reactions, profiles)
    local function members_for(has_reacted)
        local stats = '"stats":{"totalReactions":' .. count .. ',"hasReacted":' .. tostring(has_reacted) .. ',"topReactors":' .. top .. '}'
        local subject = action == 'added' and ('"reaction":' .. reaction) or ('"userId":' .. quoted(user))
        return '"roomId":' .. quoted(room_id) .. ',"elementId":' .. quoted(element_id) .. ',' .. subject .. ',' .. stats
    end
    local offset = emit_per_user(stream, channel, events_kept, 'element:reaction:' .. action, ids, members_for)
    local subject = redis.call('HMGET', element, 'createdBy', 'type')
    return record_reply(request, REACTION_TOGGLE_RECORD,
        { action, reaction, count, top, offset, subject[1] or '', subject[2] or '', redis.call('HGET', room, 'name') or '' })
end)
