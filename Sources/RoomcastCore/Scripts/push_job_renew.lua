-- push_job_renew: a worker about to send a push job checks that it still holds the job and
-- restarts the job's idle time, so no other node claims it while the send is under way. A worker
-- that was slow to get there may have lost the job (claimed by another node, or finished): it
-- must not send it.
--
-- KEYS[1] outbox         push:{outbox} or push:{outbox}:fcm
-- ARGV[1] group          the consumer group
-- ARGV[2] job            the job's entry id
-- ARGV[3] consumer       the worker
-- REPLY held
--   held: 1 if the worker still holds the job (its idle time now 0), 0 if it does not
register_write('push_job_renew', function(keys, args)
    local outbox = unpack(keys)
    local group, job, consumer = unpack(args)
    if #redis.call('XPENDING', outbox, group, job, job, 1, consumer) == 0 then
        return { 'held', 0 }
    end
    -- JUSTID leaves the delivery count alone: renewing is not another attempt.
    redis.call('XCLAIM', outbox, group, consumer, 0, job, 'JUSTID')
    return { 'held', 1 }
end)
