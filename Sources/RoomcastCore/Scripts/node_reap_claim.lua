-- A reaper takes the next batch of a dead node's index: rooms and users where it left members.
-- SPOP hands each entry to one reaper only, so reapers on several nodes share the work.
-- KEYS[1] node:{<nodeId>} (its hash: exists while the node's lease holds)
-- KEYS[2] node:{<nodeId>}:rooms, KEYS[3] node:{<nodeId>}:users
-- ARGV[1] the batch size (of each set)
-- Returns -1 when the node is alive (its hash exists: it beat again, or never lapsed), else
-- { rooms, users }, both empty once the node is fully reaped. The check and the pops are one
-- step in the node's slot, so no batch is taken after the node's next heartbeat wrote its hash.
if redis.call('EXISTS', KEYS[1]) == 1 then
    return -1
end
return { redis.call('SPOP', KEYS[2], ARGV[1]), redis.call('SPOP', KEYS[3], ARGV[1]) }
