-- Idempotent retries (prepended to the scripts of element:create, message:send and reaction
-- toggles). A mutation sent with a client-chosen request id gets, as its last KEY, the request
-- key room:{<roomId>}:request:<userId>:<operation>:<requestId> (one per kind of mutation, so an id
-- reused for another kind is another request): the script records its reply there for a day,
-- and the same request again (after a reconnect, on any node) gets `{ 'replayed', <that reply as
-- JSON> }` and changes nothing.

local REQUEST_TTL_SECONDS = 86400

-- The reply recorded for `key`, or nil (also when the mutation has no request id).
local function earlier_reply(key)
    if not key then return nil end
    return redis.call('GET', key)
end

-- Records `reply` (an array of strings and numbers) for a retry of the same request.
local function remember_reply(key, reply)
    if key then redis.call('SET', key, cjson.encode(reply), 'EX', REQUEST_TTL_SECONDS) end
    return reply
end
