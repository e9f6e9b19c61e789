-- Every function of the library is registered through these two, under `<name>_<VERSION>`.
-- VERSION is a hash of the library's source, set before this file (RoomcastLibrary.swift): two
-- versions of Roomcast sharing one Redis during a rolling upgrade each call their own functions.
--
-- A function file starts with a header naming, in order, every key (`KEYS[i] <name>`, `?` for one
-- a call may leave out at the end), every argument (`ARGV[i] <name>`, `ARGV[i…]` for the rest of
-- them) and the reply's fields (`REPLY <field>, …`, `?` for one that may be missing): its Swift
-- declaration (RoomcastFunctions) names the same, in the same order, and RoomcastLibraryTests
-- holds the two, and the `local … = unpack(keys)` / `unpack(args)` lines, together. A reply is
-- name/value pairs, `{ 'offset', offset, 'updates', json }`, read by name.

-- Registers a function that writes: called with FCALL.
local function register_write(name, callback)
    redis.register_function{ function_name = name .. '_' .. VERSION, callback = callback }
end

-- Registers a function that only reads: flagged `no-writes`, called with FCALL_RO (and so it
-- runs while Redis refuses writes, out of memory).
local function register_read(name, callback)
    redis.register_function{ function_name = name .. '_' .. VERSION, callback = callback, flags = { 'no-writes' } }
end
