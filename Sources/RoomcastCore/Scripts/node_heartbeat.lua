-- node_heartbeat: a node's lease: its hash written together with its expiry, in one step, so that
-- no node hash is ever left without one (a node dying, or a replica promoted, between an HSET and
-- its PEXPIRE would leave a node that looks alive for ever).
--
-- KEYS[1] node           node:{<nodeId>}
-- ARGV[1] ttl            milliseconds the lease holds
-- ARGV[2…] fields        field, value … of the node's hash
-- REPLY lapsed
--   lapsed: 1 when the node held no lease before this beat: its hash was gone (a pause longer
--   than its TTL, Redis lost it, or its first beat) or had no expiry
register_write('node_heartbeat', function(keys, args)
    local node = unpack(keys)
    local ttl = unpack(args, 1, 1)
    local lapsed = redis.call('PTTL', node) < 0
    redis.call('HSET', node, unpack(args, 2))
    redis.call('PEXPIRE', node, ttl)
    return { 'lapsed', lapsed and 1 or 0 }
end)
