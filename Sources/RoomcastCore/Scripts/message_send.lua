-- Stores a chat message, appends its event to the room stream and publishes it: one atomic step,
-- so subscribers see events in stream order and every published event can be replayed.
-- The same Redis work whatever the room's size: unseen message counts are not written per
-- participant but derived from the room's message sequence (`messageSeq` in the room hash) and
-- each user's read position (`room:{<roomId>}:read:messages`), see _presence.lua.
-- KEYS: the layout of _presence.lua, then
-- KEYS[6]  read positions hash       room:{<roomId>}:read:messages
-- KEYS[7]  messages stream           room:{<roomId>}:messages
-- KEYS[8]  the request key (optional, _request.lua)
-- ARGV: as in _presence.lua (ARGV[1] now, the message's created at), then
-- ARGV[5]  sender's user id
-- ARGV[6]  message id
-- ARGV[7]  text
-- ARGV[8]  event frame before the offset
-- ARGV[9]  event frame after the offset
-- ARGV[10] messages kept (exact MAXLEN: `messages.kept_per_room`, the oldest go first)
-- ARGV[11] the message as client JSON, recorded for a retry
-- Returns { offset, message JSON }; error NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.
if redis.call('SISMEMBER', KEYS[2], ARGV[5]) == 0 then
    if redis.call('EXISTS', KEYS[2]) == 0 then
        return redis.error_reply('NOT_FOUND room not found')
    end
    return redis.error_reply('FORBIDDEN not a participant of this room')
end
local earlier = earlier_reply(KEYS[8])
if earlier then return { 'replayed', earlier } end
-- Who has the room open must be exact now: a socket whose node died and whose presence expired
-- since the last presence change is taken out first (its user's read position closes at the
-- sequence before this message). Nothing expired is the usual case: one range lookup.
if #redis.call('ZRANGE', KEYS[3], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, 1) > 0 then
    announce_presence(ARGV[1])
end
redis.call('HINCRBY', KEYS[1], 'messageSeq', 1)
-- A sender away from the room has seen their own message: their read position moves with it.
-- A present sender's position is moved too, which changes nothing: it counts only once they
-- leave, and leaving sets it to the room's sequence (close_reads). Not asking whether the sender
-- is present spares reading the room's whole presence list on every message.
redis.call('HINCRBY', KEYS[6], ARGV[5], 1)
redis.call('XADD', KEYS[7], 'MAXLEN', ARGV[10], '*',
    'id', ARGV[6], 'userId', ARGV[5], 'text', ARGV[7], 'createdAt', ARGV[1])
local offset = emit_frame_to(KEYS[4], KEYS[5], ARGV[3], ARGV[8], ARGV[9])
return remember_reply(KEYS[8], { offset, ARGV[11] })
