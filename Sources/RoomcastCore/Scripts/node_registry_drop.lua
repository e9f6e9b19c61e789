-- node_registry_drop: a fully reaped node leaves the registry, unless it heartbeat meanwhile.
--
-- KEYS[1] registry       nodes:{registry}
-- ARGV[1] now            epoch ms
-- ARGV[2] node           the node's id
-- REPLY dropped
--   dropped: 1 when it was removed, else 0
register_write('node_registry_drop', function(keys, args)
    local registry = unpack(keys)
    local now, node = unpack(args)
    local score = redis.call('ZSCORE', registry, node)
    if score and tonumber(score) < tonumber(now) then
        return { 'dropped', redis.call('ZREM', registry, node) }
    end
    return { 'dropped', 0 }
end)
