import Crypto

/// A Redis Function library (`FUNCTION LOAD`): Lua whose functions are compiled once per server
/// and called by name with `FCALL` or `FCALL_RO` (``RedisFunctionCall``).
///
/// The library is versioned by its source: its name is `<name>_<version>`, the version being the
/// first 12 hex digits of the SHA1 of the Lua, and the Lua is given `local VERSION = '<version>'`
/// to register its functions under versioned names too. Two builds of an application that share
/// one Redis (a rolling upgrade) each load and call their own library, and neither replaces the
/// other's functions.
public struct RedisFunctionLibrary: Sendable, Hashable {
    /// The library's name without its version, for logs.
    public let baseName: String
    /// The first 12 hex digits of the SHA1 of the Lua.
    public let version: String
    /// The source `FUNCTION LOAD` is given: the `#!lua name=` line, `VERSION`, then the Lua.
    public let source: String

    /// The name Redis knows the library by: `<baseName>_<version>`.
    public var name: String { "\(baseName)_\(version)" }

    /// Creates a library; the version is computed here, once.
    /// - Parameters:
    ///   - name: the library's name before its version (letters, digits and `_`).
    ///   - lua: the library's Lua, which registers each function under `<function>_` .. `VERSION`.
    public init(name: String, lua: String) {
        let digest = Insecure.SHA1.hash(data: Array(lua.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        self.baseName = name
        self.version = String(digest.prefix(12))
        self.source = "#!lua name=\(name)_\(version)\nlocal VERSION = '\(version)'\n" + lua
    }

    /// The name function `function` of this library is registered under: `<function>_<version>`.
    public func registeredName(of function: String) -> String {
        "\(function)_\(version)"
    }

    /// `FUNCTION LOAD REPLACE`: loading the same version again changes nothing.
    var loadCommand: RedisCommand {
        RedisCommand("FUNCTION", ["LOAD", "REPLACE", source])
    }

    /// Checks `FUNCTION LOAD`'s answer: the name of the library it loaded.
    func checkLoaded(_ reply: RedisReply) throws(RedisError) {
        let loaded = try String(redisReply: reply)
        guard loaded == name else {
            throw RedisError(.unexpectedReply, "Redis loaded library \(loaded), expected \(name)")
        }
    }
}

extension RedisError {
    /// `ERR Function not found`: the server lacks the library (a new master, one restarted without
    /// its data, or `FUNCTION FLUSH`).
    var isFunctionMissing: Bool {
        code == .reply && message.hasPrefix("ERR Function not found")
    }
}
