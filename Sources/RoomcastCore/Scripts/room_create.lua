-- Creates a room and its participant set, unless the id is already taken.
-- KEYS[1]  room hash                 room:{<roomId>}
-- KEYS[2]  participants set          room:{<roomId>}:participants
-- ARGV[1]  room id
-- ARGV[2]  name ('' for none)
-- ARGV[3]  creator's user id
-- ARGV[4]  now, epoch milliseconds
-- ARGV[5…] participant user ids (the creator included)
-- Returns 1; error CONFLICT when the room exists.
if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.error_reply('CONFLICT room ' .. ARGV[1] .. ' exists')
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'createdBy', ARGV[3],
    'createdAt', ARGV[4], 'updatedAt', ARGV[4], 'elementCount', 0)
for i = 5, #ARGV do
    redis.call('SADD', KEYS[2], ARGV[i])
end
return 1
