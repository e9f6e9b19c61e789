-- node_reap_claim: a reaper claims the next batch of a dead node's index: rooms and users where
-- it left members. A claim is a lease: the entries move from the index to `claims`, scored by
-- when the claim lapses, and the reaper releases them once its functions ran (NodeReaper). The
-- entries of a reaper that died meanwhile are claimed again once their lease lapsed, first of
-- all, so nothing is left to the members' backstop. SPOP and the claims hand each entry to one
-- reaper at a time, so reapers on several nodes share the work. The liveness check and the claim
-- are one step in the node's slot, so no batch is taken after the node's next heartbeat.
--
-- KEYS[1] node           node:{<nodeId>}: its lease while it has an expiry (node_heartbeat.lua)
-- KEYS[2] rooms_key      node:{<nodeId>}:rooms
-- KEYS[3] users_key      node:{<nodeId>}:users
-- KEYS[4] claims         node:{<nodeId>}:reaping: 'room:<roomId>', 'user:<userId>' scored by
--                        when their claim lapses (epoch ms)
-- ARGV[1] now            epoch ms
-- ARGV[2] lease          milliseconds a claim holds
-- ARGV[3] batch          most rooms, and most users, in one claim
-- ARGV[4] lifetime       milliseconds the claims key lives unless claimed again (the index's own)
-- REPLY alive?, rooms?, users?, pending?
--   alive: 1 when the node holds its lease (it beat again, or never lapsed): nothing claimed;
--   otherwise rooms and users claimed now, and pending: claims of other reapers still held.
--   Nothing claimed and nothing pending: the node is fully reaped.
register_write('node_reap_claim', function(keys, args)
    local node, rooms_key, users_key, claims = unpack(keys)
    local now, lease, batch, lifetime = unpack(args)
    -- PTTL -2: gone; -1: a hash without an expiry holds no lease either.
    if redis.call('PTTL', node) >= 0 then
        return { 'alive', 1 }
    end
    batch = tonumber(batch)
    local until_ = tonumber(now) + tonumber(lease)
    local pending = redis.call('ZCOUNT', claims, '(' .. now, '+inf')
    local rooms, users, claimed = {}, {}, {}
    for _, entry in ipairs(redis.call('ZRANGE', claims, '-inf', now, 'BYSCORE', 'LIMIT', 0, 2 * batch)) do
        local kind, id = string.match(entry, '^(%a+):(.+)$')
        if kind == 'room' and #rooms < batch then
            rooms[#rooms + 1] = id
        elseif kind == 'user' and #users < batch then
            users[#users + 1] = id
        end
    end
    if #rooms < batch then
        for _, id in ipairs(redis.call('SPOP', rooms_key, batch - #rooms)) do rooms[#rooms + 1] = id end
    end
    if #users < batch then
        for _, id in ipairs(redis.call('SPOP', users_key, batch - #users)) do users[#users + 1] = id end
    end
    for _, id in ipairs(rooms) do
        claimed[#claimed + 1] = until_
        claimed[#claimed + 1] = 'room:' .. id
    end
    for _, id in ipairs(users) do
        claimed[#claimed + 1] = until_
        claimed[#claimed + 1] = 'user:' .. id
    end
    if #claimed > 0 then
        redis.call('ZADD', claims, unpack(claimed))
        redis.call('PEXPIRE', claims, lifetime)
    end
    return { 'rooms', rooms, 'users', users, 'pending', pending }
end)
