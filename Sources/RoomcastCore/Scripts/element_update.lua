-- Applies changed fields to an element and emits `element:updated {elementId, updates}`; a
-- position change also brings it to front (then `updates` carries the new zIndex).
-- KEYS: the element layout of _shared.lua.
-- ARGV[1] user id, ARGV[2] element id, ARGV[3] room id, ARGV[4] now, ARGV[5] events kept,
-- ARGV[6] '1' to bring to front, ARGV[7] '1' to answer with the whole element (REST; a socket's
-- ack carries only the change, as a drag sends many and re-reading the element would cost more
-- than the change), ARGV[8…] field, value … (validated by the caller)
-- Returns { offset, updates JSON[, element JSON] }.
check_participant(ARGV[1])
check_element()
local members = {}
local pairs_ = {}
for i = 8, #ARGV, 2 do
    local name, value = ARGV[i], ARGV[i + 1]
    pairs_[#pairs_ + 1] = name
    pairs_[#pairs_ + 1] = value
    members[#members + 1] = json_member(name, value)
end
if #pairs_ > 0 then
    redis.call('HSET', KEYS[6], unpack(pairs_))
end
local z
if ARGV[6] == '1' then
    local moved
    z, moved = bring_to_front(ARGV[2])
    if moved then members[#members + 1] = '"zIndex":' .. z end
end
touch(ARGV[4])
local json = '{' .. table.concat(members, ',') .. '}'
local offset = emit('element:updated', '"roomId":' .. quoted(ARGV[3]) .. ',"elementId":' .. quoted(ARGV[2]) .. ',"updates":' .. json, ARGV[5])
if ARGV[7] ~= '1' then
    return { offset, json }
end
z = z or tonumber(redis.call('ZSCORE', KEYS[3], ARGV[2]))
return { offset, json, element_json(KEYS[6], z, ARGV[1]) }
