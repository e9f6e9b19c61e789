import Testing

@testable import RedisClient

@Suite("RedisConfiguration(url:)")
struct RedisConfigurationTests {
    @Test("redis:// stays standalone")
    func standalone() throws {
        let configuration = try RedisConfiguration(url: "redis://:pw@host:6380/2")
        #expect(configuration.mode == .standalone)
        #expect(!configuration.isCluster)
        #expect(configuration.endpoint == RedisEndpoint(host: "host", port: 6380, password: "pw", database: 2))
    }

    static let clusterURLs: [(String, [RedisEndpoint])] = [
        ("redis-cluster://a:7000", [RedisEndpoint(host: "a", port: 7000)]),
        ("redis-cluster://a:7000,b:7001,c", [RedisEndpoint(host: "a", port: 7000), RedisEndpoint(host: "b", port: 7001), RedisEndpoint(host: "c")]),
        ("redis-cluster://127.0.0.1:7000,[::1]:7001/", [RedisEndpoint(host: "127.0.0.1", port: 7000), RedisEndpoint(host: "::1", port: 7001)]),
        (
            "redis-cluster://user:p%40w@a:1,b:2",
            [RedisEndpoint(host: "a", port: 1, username: "user", password: "p@w"), RedisEndpoint(host: "b", port: 2, username: "user", password: "p@w")]
        ),
        ("redis-cluster://:pw@a:1", [RedisEndpoint(host: "a", port: 1, password: "pw")]),
    ]

    @Test("redis-cluster:// gives seeds and cluster mode", arguments: clusterURLs)
    func cluster(url: String, seeds: [RedisEndpoint]) throws {
        let configuration = try RedisConfiguration(url: url)
        #expect(configuration.mode == .cluster(seeds: seeds))
        #expect(configuration.isCluster)
        #expect(configuration.endpoint == seeds[0])
    }

    static let badClusterURLs: [String] = [
        "redis-cluster://",
        "redis-cluster://a:1,",
        "redis-cluster://,a:1",
        "redis-cluster://a:1,,b:2",
        "redis-cluster://a:1/1",
        "redis-cluster://a:99999",
        "redis-cluster://:pw@",
        "redis-cluster://a:x,b:2",
    ]

    @Test("rejects bad cluster URLs with .invalidURL", arguments: badClusterURLs)
    func rejects(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
        #expect(error?.code == .invalidURL)
    }

    @Test("the password never shows in the error")
    func redacts() {
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis-cluster://:hunter2@a:1,b:x") }
        #expect(error.map { !$0.message.contains("hunter2") } == true)
        #expect(error?.message.contains("redis-cluster://***@") == true)
    }

    @Test("rediss:// and rediss-cluster:// are the same over TLS (the system's trust store until told otherwise)")
    func tls() throws {
        let node = try RedisConfiguration(url: "rediss://user:pw@cache.example:6380/1")
        #expect(node.mode == .standalone && node.tls != nil)
        #expect(node.endpoint == RedisEndpoint(host: "cache.example", port: 6380, username: "user", password: "pw", database: 1))
        #expect(node.tls?.caFile == nil && node.tls?.serverName == nil)
        let cluster = try RedisConfiguration(url: "rediss-cluster://:pw@a:7000,b:7001")
        #expect(cluster.mode == .cluster(seeds: [RedisEndpoint(host: "a", port: 7000, password: "pw"), RedisEndpoint(host: "b", port: 7001, password: "pw")]))
        #expect(cluster.tls != nil)
        #expect(try RedisConfiguration(url: "redis://a:1").tls == nil)
        #expect(try RedisConfiguration(url: "redis-cluster://a:1").tls == nil)
    }

    @Test("an unknown scheme names the four it takes; a TLS URL's password never shows", arguments: ["http://a:1", "redis+tls://a:1", "rediss-cluster://:hunter2@a:x"])
    func badScheme(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
        #expect(error?.code == .invalidURL)
        #expect(error.map { !$0.message.contains("hunter2") } == true)
        if url.hasPrefix("rediss-cluster://") {
            #expect(error?.message.contains("rediss-cluster://***@") == true, "\(String(describing: error))")
        } else {
            #expect(error?.message.contains("rediss-cluster://") == true, "\(String(describing: error))")
        }
    }

    @Test("makeClient gives a redis:// URL a RedisClient and a redis-cluster:// URL a RedisClusterClient")
    func makeClientFollowsTheMode() throws {
        let node = try RedisConfiguration(url: "redis://127.0.0.1:6379").makeClient()
        let cluster = try RedisConfiguration(url: "redis-cluster://127.0.0.1:7000,127.0.0.1:7001").makeClient()
        #expect(node is RedisClient)
        #expect(cluster is RedisClusterClient)
        #expect(cluster.configuration.isCluster)
    }
}
