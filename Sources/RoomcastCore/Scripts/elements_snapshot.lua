-- elements_snapshot: the room's elements in z-order with the stream offset they are current at:
-- one atomic read, so a client that applies later events after this offset misses none and
-- repeats none.
--
-- KEYS[1] room           the room keys of _elements.lua
-- KEYS[2] participants
-- KEYS[3] z_order
-- KEYS[4] stream
-- KEYS[5] channel
-- KEYS[6] profiles       room:{<roomId>}:profiles
-- ARGV[1] user
-- ARGV[2] element_prefix   room:{<roomId>}:element:
-- REPLY offset, elements
--   offset: '0-0' for an empty stream; elements: a JSON array, zIndex ascending
register_read('elements_snapshot', function(keys, args)
    local room, participants, z_order, stream, _, profiles = unpack(keys)
    local user, element_prefix = unpack(args)
    check_participant(room, participants, user)
    local elements = elements_json(z_order, element_prefix, user, profiles)
    return { 'offset', last_offset(stream), 'elements', elements }
end)
