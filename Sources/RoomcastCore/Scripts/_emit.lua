-- How every script appends a room event to the room's stream and publishes it on the room's
-- channel, in the same atomic step as the change (prepended to element and presence scripts).
-- The offset is the stream entry id; the frame is stored split around it (`p`, `s`) so a replay
-- rebuilds exactly what was published.

-- Appends and publishes event `event`; `members` are the JSON object's members without braces,
-- the offset is added as the last one. Published as `<offset> <frame>`. Returns the offset.
local function emit_to(stream_key, channel_key, kept, event, members)
    local p = '42["' .. event .. '",{' .. members .. ',"offset":"'
    local s = '"}]'
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', kept, '*', 'p', p, 's', s)
    redis.call('SPUBLISH', channel_key, offset .. ' ' .. p .. offset .. s)
    return offset
end

-- Appends an event that differs per recipient and publishes it: users in `ids` get the frame
-- built with `members_for(true)`, everyone else `members_for(false)`. The published payload is
-- `<offset> @<id>,<id>… <length of the first frame> <first frame><second frame>`.
local function emit_per_user(stream_key, channel_key, kept, event, ids, members_for)
    local head = '42["' .. event .. '",{'
    local pa, pb = head .. members_for(true) .. ',"offset":"', head .. members_for(false) .. ',"offset":"'
    local s = '"}]'
    local users = table.concat(ids, ',')
    local offset = redis.call('XADD', stream_key, 'MAXLEN', '~', kept, '*', 'pa', pa, 'pb', pb, 's', s, 'u', users)
    local a = pa .. offset .. s
    redis.call('SPUBLISH', channel_key, offset .. ' @' .. users .. ' ' .. #a .. ' ' .. a .. pb .. offset .. s)
    return offset
end
