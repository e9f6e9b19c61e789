-- Stores a chat message, appends its event to the room stream and publishes it: one atomic step,
-- so subscribers see events in stream order and every published event can be replayed.
-- KEYS[1]  participants set          room:{<roomId>}:participants
-- KEYS[2]  messages stream           room:{<roomId>}:messages
-- KEYS[3]  room event stream         room:{<roomId>}:stream
-- KEYS[4]  room channel              room:{<roomId>}:events   (a channel, hash-tagged like the keys)
-- ARGV[1]  sender's user id
-- ARGV[2]  message id
-- ARGV[3]  text
-- ARGV[4]  created at, epoch milliseconds
-- ARGV[5]  event frame before the offset
-- ARGV[6]  event frame after the offset
-- ARGV[7]  messages kept (exact MAXLEN: `messages.kept_per_room`, the oldest go first)
-- ARGV[8]  events kept (approximate MAXLEN)
-- KEYS[5]  presence set            room:{<roomId>}:presence
-- KEYS[6]  unseen messages hash    room:{<roomId>}:unseen:messages
-- KEYS[7]  the request key (optional, _request.lua)
-- ARGV[9]  the message as client JSON, recorded for a retry
-- Participants other than the sender who do not have the room open get one more unseen message.
-- Returns { offset, message JSON }; error NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then
    if redis.call('EXISTS', KEYS[1]) == 0 then
        return redis.error_reply('NOT_FOUND room not found')
    end
    return redis.error_reply('FORBIDDEN not a participant of this room')
end
local earlier = earlier_reply(KEYS[7])
if earlier then return { 'replayed', earlier } end
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[7], '*',
    'id', ARGV[2], 'userId', ARGV[1], 'text', ARGV[3], 'createdAt', ARGV[4])
local offset = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[8], '*', 'p', ARGV[5], 's', ARGV[6])
redis.call('SPUBLISH', KEYS[4], offset .. ' ' .. ARGV[5] .. offset .. ARGV[6])
grow_unseen(KEYS[1], KEYS[5], KEYS[6], ARGV[1], ARGV[4])
return remember_reply(KEYS[7], { offset, ARGV[9] })
