-- Appends one per-user event to the user's stream and publishes it (_emit.lua).
-- KEYS[1] user stream    user:{<userId>}:stream
-- ARGV[1] user channel   user:{<userId>}:events
-- ARGV[2] the event's complete Socket.IO frame
-- ARGV[3] '1' when this is a retry (optional)
-- Returns the event's offset.

-- A retry follows a try that failed, and a try whose reply alone was lost (Redis died after
-- running it, with its AOF) has appended and published the frame already: doing it again would
-- deliver it twice. A frame carries absolute state (counts, a whole room), so the same frame
-- among the stream's last few entries is this one.
if ARGV[3] == '1' then
    for _, entry in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 16)) do
        if entry[2][2] == ARGV[2] then
            return entry[1]
        end
    end
end
return emit_user_frame(KEYS[1], ARGV[1], ARGV[2])
