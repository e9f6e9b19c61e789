-- Appends one per-user event to the user's stream and publishes it (_emit.lua).
-- KEYS[1] user stream    user:{<userId>}:stream
-- ARGV[1] user channel   user:{<userId>}:events
-- ARGV[2] the event's complete Socket.IO frame
-- Returns the event's offset.
return emit_user_frame(KEYS[1], ARGV[1], ARGV[2])
