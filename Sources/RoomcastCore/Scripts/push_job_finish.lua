-- Ends a push job: acknowledges and deletes it from the outbox, and when it failed for good,
-- appends it to the dead-letter stream with why, in one step (a job is never both).
-- KEYS[1] outbox stream, KEYS[2] dead-letter stream
-- ARGV[1] consumer group, ARGV[2] job id, ARGV[3] reason ('' when delivered), ARGV[4] attempts
-- Returns 1 if this call finished the job, 0 if it was already finished (by another node).

local entries = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if acked == 0 or ARGV[3] == '' or #entries == 0 then
    return acked
end
local fields = entries[1][2]
fields[#fields + 1] = 'job'
fields[#fields + 1] = ARGV[2]
fields[#fields + 1] = 'reason'
fields[#fields + 1] = ARGV[3]
fields[#fields + 1] = 'attempts'
fields[#fields + 1] = ARGV[4]
redis.call('XADD', KEYS[2], '*', unpack(fields))
return acked
