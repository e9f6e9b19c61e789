-- message_send: stores a chat message, appends its event to the room stream and publishes it: one
-- atomic step, so subscribers see events in stream order and every published event can be
-- replayed. The same Redis work whatever the room's size: unseen message counts are not written
-- per participant but derived from the room's message sequence (`messageSeq` in the room hash)
-- and each user's read position (`room:{<roomId>}:read:messages`), see _presence.lua.
--
-- A message usually reaches Redis by itself, so what it sends and answers is kept to what the
-- common case needs: the message as client JSON travels only with a request key (for the
-- retry's record) and comes back only in a replay; the room id is read from the room key
-- (`room:{<roomId>}`) only for a presence change; the frame after the offset is FRAME_SUFFIX.
--
-- KEYS[1] room           the room keys of _presence.lua
-- KEYS[2] participants
-- KEYS[3] presence
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] reads
-- KEYS[7] messages       room:{<roomId>}:messages
-- KEYS[8] request?       the request key (_request.lua), when the client sent a request id
-- ARGV[1] now            epoch ms, the message's createdAt
-- ARGV[2] events_kept
-- ARGV[3] sender         the sender's user id
-- ARGV[4] message_id
-- ARGV[5] text
-- ARGV[6] frame_prefix   the `message:new` frame before its offset
-- ARGV[7] messages_kept  exact MAXLEN (`messages.kept_per_room`): the oldest go first
-- ARGV[8…] message       with a request key only: the message as client JSON, recorded for a retry
-- REPLY offset, message?, replayed?
-- `message` is in a replay's reply only: the message first sent.
-- Errors: NOT_FOUND for an unknown room, FORBIDDEN for a non-participant.
local MESSAGE_SEND_RECORD = { 'offset', 'message' }

register_write('message_send', function(keys, args)
    local room, participants, presence, stream, channel, reads, messages, request = unpack(keys)
    local now, events_kept, sender, message_id, text, frame_prefix, messages_kept = unpack(args, 1, 7)
    if redis.call('SISMEMBER', participants, sender) == 0 then
        if redis.call('EXISTS', participants) == 0 then
            return redis.error_reply('NOT_FOUND room not found')
        end
        return redis.error_reply('FORBIDDEN not a participant of this room')
    end
    local earlier = recorded_reply(request, MESSAGE_SEND_RECORD)
    if earlier then return earlier end
    -- Who has the room open must be exact now: a socket whose node died and whose presence expired
    -- since the last presence change is taken out first (its user's read position closes at the
    -- sequence before this message). Nothing expired is the usual case: one `ZCOUNT`, which costs
    -- a message that wakes Redis by itself less than a `ZRANGE … BYSCORE LIMIT 0 1`.
    if redis.call('ZCOUNT', presence, '-inf', now) > 0 then
        announce_presence(room, presence, stream, channel, reads, events_kept, string.sub(room, 7, -2), now)
    end
    redis.call('HINCRBY', room, 'messageSeq', 1)
    -- A sender away from the room has seen their own message: their read position moves with it.
    -- A present sender's position is moved too, which changes nothing: it counts only once they
    -- leave, and leaving sets it to the room's sequence (close_reads). Not asking whether the sender
    -- is present spares reading the room's whole presence list on every message.
    redis.call('HINCRBY', reads, sender, 1)
    redis.call('XADD', messages, 'MAXLEN', messages_kept, '*',
        'id', message_id, 'userId', sender, 'text', text, 'createdAt', now)
    local offset = emit_frame_to(stream, channel, events_kept, frame_prefix, FRAME_SUFFIX)
    -- The record keeps the layout every version reads (_request.lua).
    if request then record_request(request, { offset, args[8] }) end
    return { 'offset', offset }
end)
