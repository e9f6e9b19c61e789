-- push_job_finish: ends a push job: acknowledges and deletes it from the outbox, and when it
-- failed for good, appends it to the dead-letter stream with why, in one step (a job is never both).
--
-- KEYS[1] outbox         push:{outbox} or push:{outbox}:fcm
-- KEYS[2] dead           the dead-letter stream, push:{outbox}:dead
-- ARGV[1] group          the consumer group
-- ARGV[2] job            the job's entry id
-- ARGV[3] reason         '' when delivered
-- ARGV[4] attempts
-- REPLY finished
--   finished: 1 if this call finished the job, 0 if it was already finished (by another node)
register_write('push_job_finish', function(keys, args)
    local outbox, dead = unpack(keys)
    local group, job, reason, attempts = unpack(args)
    local entries = redis.call('XRANGE', outbox, job, job)
    local acked = redis.call('XACK', outbox, group, job)
    redis.call('XDEL', outbox, job)
    if acked == 0 or reason == '' or #entries == 0 then
        return { 'finished', acked }
    end
    local fields = entries[1][2]
    fields[#fields + 1] = 'job'
    fields[#fields + 1] = job
    fields[#fields + 1] = 'reason'
    fields[#fields + 1] = reason
    fields[#fields + 1] = 'attempts'
    fields[#fields + 1] = attempts
    redis.call('XADD', dead, '*', unpack(fields))
    return { 'finished', acked }
end)
