// swift-tools-version:6.2
import PackageDescription

/// Settings every target shares: explicit existentials, imports visible only where declared,
/// and internal imports unless a module re-exports a type on purpose.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "roomcast",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "roomcast", targets: ["roomcast"]),
        .library(name: "RedisClient", targets: ["RedisClient"]),
        // For the codec fuzz target in Fuzz/, a package of its own so that its sanitizer build
        // never slows this one: another package can only import products.
        .library(name: "SocketIO", targets: ["SocketIO"]),
        .library(name: "RoomcastServer", targets: ["RoomcastServer"]),
        // A Socket.IO v5 server library for any application (Examples/Chat is one, the gateway
        // another), and the WebSocket server its public API names.
        .library(name: "SocketIOServer", targets: ["SocketIOServer"]),
        .library(name: "WebSocketServer", targets: ["WebSocketServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: ["YAML"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // MARK: Redis

        // hiredis's `.pc` file puts /usr/include/hiredis on every dependent's include path (its
        // read.h and sds.h then shadow other headers), so the header paths are spelled out in the
        // shim instead of via pkg-config; the provider hint still tells a missing library's users
        // what to install.
        .systemLibrary(
            name: "CHiredis",
            path: "Sources/CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .target(
            name: "RedisClient",
            dependencies: [
                "CHiredis",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // TLS to Redis (`rediss://`): the handler, and its handshake event.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),

        /// zlib, for WebSocket permessage-deflate (RFC 7692).
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // MARK: Socket.IO

        /// Engine.IO v4 / Socket.IO v5 packets: a pure codec, shared by every transport.
        .target(
            name: "SocketIO",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio")
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Domain

        /// Models, Redis key schema, Lua scripts and stores: the rooms app's rules, free of HTTP.
        .target(
            name: "RoomcastCore",
            dependencies: [
                "RedisClient",
                "SocketIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Scripts")],
            swiftSettings: swiftSettings
        ),

        // MARK: Push

        /// One HTTP/2 connection to one host (TLS with ALPN h2, or h2c for local tests), shared by
        /// concurrent requests and reopened when it closes: the transport of `APNs` and `FCM`.
        .target(
            name: "PushHTTP2",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        /// Apple's push service: sends a push, says what APNs answered.
        .target(
            name: "APNs",
            dependencies: [
                "PushHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        /// Firebase Cloud Messaging (HTTP v1): a service account's OAuth access token, then
        /// `messages:send`; says what FCM answered.
        .target(
            name: "FCM",
            dependencies: [
                "PushHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                // RS256 for the service account's JWT; jwt-kit already builds it.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: WebSocket

        /// A generic RFC 6455 server on a plain NIO pipeline behind Hummingbird's HTTP/1.1 server:
        /// the gateway's socket endpoint and the Autobahn echo both run on it.
        .target(
            name: "WebSocketServer",
            dependencies: [
                "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Socket.IO server

        /// A Socket.IO v5 server over Engine.IO v4 (long-polling and WebSocket): namespaces, event
        /// handlers, rooms and broadcasts through an adapter, acks both ways, for any application
        /// (the gateway is one, the conformance server and Examples/Chat others).
        .target(
            name: "SocketIOServer",
            dependencies: [
                "SocketIO",
                "WebSocketServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Gateway

        .target(
            name: "RoomcastServer",
            dependencies: [
                "APNs",
                "FCM",
                "RedisClient",
                "RoomcastCore",
                "SocketIO",
                "SocketIOServer",
                "WebSocketServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The live room console (`GET /console`) and the REST API's OpenAPI document
            // (`GET /api/openapi.json`): static files served as they are.
            resources: [.copy("Console"), .copy("OpenAPI")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "roomcast",
            dependencies: [
                "RoomcastServer",
                // `roomcast inspect` reads Redis through the stores.
                "RoomcastCore",
                "RedisClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Benchmarks

        .executableTarget(
            name: "RedisClientBenchmark",
            dependencies: [
                "RedisClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/RedisClientBenchmark",
            swiftSettings: swiftSettings
        ),

        /// Redis's CPU per room operation through the stores (scripts/bench-redis.sh scripts).
        .executableTarget(
            name: "RedisScriptsBenchmark",
            dependencies: ["RedisClient", "RoomcastCore"],
            path: "Benchmarks/RedisScriptsBenchmark",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "roomcast-bench",
            dependencies: [
                "RedisClient",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSCompression", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/RoomcastBenchmark",
            swiftSettings: swiftSettings
        ),

        // MARK: Conformance

        /// An echo on the gateway's WebSocket stack for Autobahn|Testsuite (scripts/autobahn.sh);
        /// never part of `roomcast`.
        .executableTarget(
            name: "roomcast-autobahn-echo",
            dependencies: [
                "WebSocketServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Conformance/AutobahnEcho",
            swiftSettings: swiftSettings
        ),
        /// The official Engine.IO v4 / Socket.IO v5 suites' test server, on `SocketIOServer`
        /// (scripts/conformance.sh); never part of `roomcast`.
        .executableTarget(
            name: "roomcast-conformance",
            dependencies: [
                "SocketIO",
                "SocketIOServer",
                "WebSocketServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Conformance/SocketIOConformance",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests

        .target(
            name: "RoomcastTestSupport",
            dependencies: [
                "RedisClient",
                "SocketIO",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSCompression", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/RoomcastTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RedisClientTests",
            dependencies: [
                "RedisClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RedisClientIntegrationTests",
            dependencies: [
                "RedisClient",
                "RoomcastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "APNsTests",
            dependencies: [
                "APNs",
                "PushHTTP2",
                "RoomcastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FCMTests",
            dependencies: [
                "FCM",
                "PushHTTP2",
                "RoomcastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SocketIOTests",
            dependencies: [
                "SocketIO",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SocketIOServerTests",
            dependencies: [
                "SocketIO",
                "SocketIOServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RoomcastCoreTests",
            dependencies: [
                "RoomcastCore",
                "RedisClient",
                "SocketIO",
                "RoomcastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WebSocketServerTests",
            dependencies: [
                "WebSocketServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RoomcastServerTests",
            dependencies: [
                "RoomcastServer",
                "WebSocketServer",
                "RoomcastCore",
                "RoomcastTestSupport",
                "RedisClient",
                "SocketIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
