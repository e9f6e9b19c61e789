import Testing

@testable import RedisClient

@Suite("RedisEndpoint(url:)")
struct RedisEndpointTests {
    static let goodURLs: [(String, RedisEndpoint)] = [
        ("redis://host", RedisEndpoint(host: "host")),
        ("redis://host:6380", RedisEndpoint(host: "host", port: 6380)),
        ("redis://host/", RedisEndpoint(host: "host")),
        ("redis://127.0.0.1:65535/15", RedisEndpoint(host: "127.0.0.1", port: 65535, database: 15)),
        ("redis://:pw@host:1/2", RedisEndpoint(host: "host", port: 1, password: "pw", database: 2)),
        ("redis://user:pw@host", RedisEndpoint(host: "host", username: "user", password: "pw")),
        ("redis://user:@host", RedisEndpoint(host: "host", username: "user", password: "")),
        ("redis://pw@host", RedisEndpoint(host: "host", password: "pw")),
        ("redis://:s3cr%25t@host", RedisEndpoint(host: "host", password: "s3cr%t")),
        ("redis://us%40er:p%3a%2Fw@host", RedisEndpoint(host: "host", username: "us@er", password: "p:/w")),
        ("redis://:caf%C3%A9@host", RedisEndpoint(host: "host", password: "café")),
        ("redis://[::1]:6379/1", RedisEndpoint(host: "::1", port: 6379, database: 1)),
        ("redis://[::1]", RedisEndpoint(host: "::1")),
        ("redis://:pw@[fe80::1]:7000", RedisEndpoint(host: "fe80::1", port: 7000, password: "pw")),
    ]

    @Test("parses", arguments: goodURLs)
    func parses(url: String, expected: RedisEndpoint) throws {
        #expect(try RedisEndpoint(url: url) == expected)
    }

    static let badURLs: [String] = [
        "",
        "host:6379",
        "http://host",
        "rediss://host",
        "redis:/host",
        "redis://",
        "redis://:6379",
        "redis://:pw@",
        "redis://host:0",
        "redis://host:70000",
        "redis://host:abc",
        "redis://host:",
        "redis://host/-1",
        "redis://host/x",
        "redis://:s3cr%zzt@host",
        "redis://:pw%2@host",
        "redis://:pw%@host",
        "redis://us%g0er:pw@host",
        "redis://:%FF@host",
        "redis://[::1",
        "redis://[::1]x",
        "redis://[]:6379",
    ]

    @Test("rejects with .invalidURL", arguments: badURLs)
    func rejects(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisEndpoint(url: url) }
        #expect(error?.code == .invalidURL)
    }

    static let badURLsWithPassword: [String] = [
        "rediss://:hunter2@host",
        "http://user:hunter2@host",
        "redis://user:hunter2@",
        "redis://user:hunter2@:6379",
        "redis://:hunter2@host:0",
        "redis://:hunter2@host:70000",
        "redis://user:hunter2@host:abc",
        "redis://:hunter2@host/-1",
        "redis://user:hunter2@host/x",
        "redis://:hunter2%zz@host",
        "redis://hunter2%@host",
        "redis://:hunter2@[::1",
        "redis://:hun@ter2@host:0",
        "redis://:hun/ter2@host",
    ]

    @Test("errors never reveal the password", arguments: badURLsWithPassword)
    func errorsHidePassword(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisEndpoint(url: url) }
        guard let error else { return }
        #expect(error.code == .invalidURL)
        for secret in ["hunter2", "hunter", "ter2"] {
            #expect(!error.message.contains(secret), "message: \(error.message)")
            #expect(!error.description.contains(secret), "description: \(error.description)")
        }
    }

    @Test(
        "description is host:port/db without credentials",
        arguments: [
            ("redis://host", "host:6379"),
            ("redis://user:hunter2@host:6380/3", "host:6380/3"),
            ("redis://hunter2@host", "host:6379"),
            ("redis://:hunter2@[::1]:6379/1", "[::1]:6379/1"),
        ]
    )
    func description(url: String, expected: String) throws {
        let endpoint = try RedisEndpoint(url: url)
        #expect(endpoint.description == expected)
        #expect(!"\(endpoint)".contains("hunter2"))
    }

    @Test func configurationFromURL() throws {
        #expect(try RedisConfiguration(url: "redis://:pw@cache:6380/4").endpoint == RedisEndpoint(host: "cache", port: 6380, password: "pw", database: 4))
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis://cache:0") }
        #expect(error?.code == .invalidURL)
    }
}
