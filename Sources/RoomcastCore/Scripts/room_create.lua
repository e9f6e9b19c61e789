-- room_create: creates a room and its participant set, unless the id is already taken.
--
-- KEYS[1] room           room:{<roomId>}
-- KEYS[2] participants   room:{<roomId>}:participants
-- ARGV[1] room_id
-- ARGV[2] name           '' for none
-- ARGV[3] creator        the creator's user id
-- ARGV[4] now            epoch ms
-- ARGV[5…] participants  participant user ids (the creator included)
-- REPLY created
-- Errors: CONFLICT when the room exists.
register_write('room_create', function(keys, args)
    local room, participants = unpack(keys)
    local room_id, name, creator, now = unpack(args, 1, 4)
    if redis.call('EXISTS', room) == 1 then
        return redis.error_reply('CONFLICT room ' .. room_id .. ' exists')
    end
    redis.call('HSET', room, 'id', room_id, 'name', name, 'createdBy', creator,
        'createdAt', now, 'updatedAt', now, 'elementCount', 0)
    for i = 5, #args do
        redis.call('SADD', participants, args[i])
    end
    return { 'created', 1 }
end)
