-- user_event_publish: appends one per-user event to the user's stream and publishes it (_emit.lua).
-- A retry follows a try that failed, and a try whose reply alone was lost (Redis died after
-- running it, with its AOF) has appended and published the frame already: doing it again would
-- deliver it twice. A frame carries absolute state (counts, a whole room), so the same frame
-- among the stream's last few entries is this one.
--
-- KEYS[1] stream         user:{<userId>}:stream
-- KEYS[2] sockets        user:{<userId>}:sockets
-- ARGV[1] route          node-events:{<slot tag of the user's slot>}:
-- ARGV[2] user_id        <userId>
-- ARGV[3] frame          the event's complete Socket.IO frame
-- ARGV[4] retry          '1' when this is a retry
-- REPLY offset
register_write('user_event_publish', function(keys, args)
    local stream, sockets = unpack(keys)
    local route, user_id, frame, retry = unpack(args)
    if retry == '1' then
        for _, entry in ipairs(redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 16)) do
            if entry[2][2] == frame then
                return { 'offset', entry[1] }
            end
        end
    end
    return { 'offset', emit_user_frame(user_target(stream, sockets, route, user_id), frame) }
end)
