-- Idempotent retries (element:create, message:send and reaction toggles). A mutation sent with a
-- client-chosen request id gets, as its last key, the request key
-- room:{<roomId>}:request:<userId>:<operation>:<requestId> (one per kind of mutation, so an id
-- reused for another kind is another request). The function records its reply there for a day,
-- and the same request again (after a reconnect, on any node) gets that reply with `replayed` set,
-- and changes nothing.
--
-- A record is a JSON array of the reply's values in the order of the function's `layout`: the form
-- every version has written, so a retry that reaches a node of another version during a rolling
-- upgrade is replayed too.

local REQUEST_TTL_SECONDS = 86400

-- `values` as the reply's name/value pairs, named by `layout`.
local function named_reply(layout, values)
    local reply = {}
    for i, name in ipairs(layout) do
        reply[#reply + 1] = name
        reply[#reply + 1] = values[i]
    end
    return reply
end

-- The reply recorded under `key` with `replayed` = 1, or nil (also when the call has no request key).
local function recorded_reply(key, layout)
    if not key then return nil end
    local record = redis.call('GET', key)
    if not record then return nil end
    local reply = named_reply(layout, cjson.decode(record))
    reply[#reply + 1] = 'replayed'
    reply[#reply + 1] = 1
    return reply
end

-- Records `values` (strings and numbers, in the order of the function's `layout`) under `key` for
-- a retry of the same request.
local function record_request(key, values)
    redis.call('SET', key, cjson.encode(values), 'EX', REQUEST_TTL_SECONDS)
end

-- Records `values` (in `layout`'s order) for a retry of the same request and returns them as the
-- reply's pairs.
local function record_reply(key, layout, values)
    if key then record_request(key, values) end
    return named_reply(layout, values)
end
