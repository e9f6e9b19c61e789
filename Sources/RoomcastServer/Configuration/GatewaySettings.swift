public import Logging
public import RedisClient
public import WebSocketServer

/// Everything one gateway node needs to start, validated.
///
/// Read from `config/roomcast.yaml`, then `ROOMCAST_*` environment variables, then command-line
/// flags (later sources win); see ``GatewaySettings/init(reader:)``. Each field's initial value is
/// its setting's default; what each setting means, and which values it takes, is declared once in
/// ``GatewaySettings/sections``.
public struct GatewaySettings: Sendable {
    /// Address to listen on (`host`).
    public var host: String = "127.0.0.1"
    /// TCP port to listen on (`port`).
    public var port: Int = 8080
    /// How to reach Redis (`redis.url`, `redis.pool_size`, `redis.command_timeout_ms`); the
    /// client's whole configuration is ``redisClientConfiguration()``.
    public var redis: RedisConfiguration = RedisConfiguration()
    /// TLS files and name for Redis (`redis.tls_*`).
    public var redisTLS = RedisTLSSettings()
    /// Durable acks (`redis.wait_replicas`, `redis.wait_timeout_ms`).
    public var redisWait = RedisWaitSettings()
    /// Minimum log level (`log.level`).
    public var logLevel: Logger.Level = .info
    /// How log lines are written (`log.format`).
    public var logFormat: LogFormat = .text
    /// HS256 key for the JWTs this node issues and accepts (`jwt.secret`); required to serve.
    public var jwtSecret: String?
    /// How long an issued token is valid (`jwt.ttl_seconds`).
    public var tokenLifetime: Duration = .seconds(7 * 24 * 3600)
    /// bcrypt cost for password hashes (`auth.bcrypt_cost`).
    public var bcryptCost: Int = 10
    /// Most participants a room may have, its creator included (`rooms.max_participants`).
    public var maxRoomParticipants: Int = 16
    /// Most elements a room may hold (`rooms.max_elements`).
    public var maxRoomElements: Int = 5_000
    /// Longest chat message, in bytes of UTF-8 (`messages.max_length`).
    public var maxMessageLength: Int = 16_000
    /// Chat messages kept per room for the history (`messages.kept_per_room`).
    public var messagesKeptPerRoom: Int = 10_000
    /// Longest element `content`, in bytes of UTF-8 (`elements.max_content_length`).
    public var maxElementContentLength: Int = 80_000
    /// Largest REST request body, in bytes (`http.max_body_bytes`).
    public var maxRequestBodySize: Int = 1 << 20
    /// HTTP connections one client address may hold on this node at once
    /// (`http.max_connections_per_address`). The address is the connection's peer, or the
    /// `X-Forwarded-For` client of its first request when `rate.trust_forwarded_for` is on.
    public var maxConnectionsPerAddress: Int = 2_000
    /// How long an HTTP connection may go without a whole request in flight (`http.idle_timeout_ms`).
    public var httpIdleTimeout: Duration = .seconds(30)
    /// Connections the kernel may hold accepted but not yet taken by the node (`http.listen_backlog`).
    public var listenBacklog: Int = 4_096
    /// REST rate limits (`rate.*`), counted across nodes in Redis.
    var requestLimits = RequestLimits.Settings()
    /// Browser origins allowed to use long-polling and the REST API across origins (`http.cors_origins`).
    public var corsOrigins: CORSOrigins = .none
    /// How long a socket's presence member lives without its node refreshing it
    /// (`presence.backstop_ms`). A backstop only: a crashed node's members are reaped once its
    /// registry entry expires (``nodeTTL``).
    public var presenceBackstop: Duration = .seconds(3_600)
    /// How long a node keeps trying to read back the room events its pub/sub link missed before
    /// it closes the room's sockets instead (`pubsub.gap_read_timeout_ms`).
    public var gapReadTimeout: Duration = .seconds(30)
    /// Room events kept in each room's stream for recovery by offset (`rooms.stream_length`).
    public var roomStreamLength: Int = 1_000
    /// Engine.IO and socket settings.
    public var socket = SocketSettings()
    /// How long a SIGTERM drain may take (`shutdown.drain_timeout_ms`).
    public var drainTimeout: Duration = .seconds(30)
    /// Notifications and their push delivery.
    public var notifications = NotificationSettings()
    /// The base URL other nodes reach this one at (`node.advertise_url`); `nil`:
    /// `http://<host>:<port>` (see ``advertiseURL(port:)``).
    public var nodeAdvertiseURL: String?
    /// How long this node's entry in the node registry lives without a heartbeat (`node.ttl_ms`);
    /// the node sends one every third of it.
    public var nodeTTL: Duration = .seconds(15)

    /// Settings with every default.
    public init() {}

    /// The URL this node advertises in the node registry: `node.advertise_url` when set, else
    /// `http://<host>:<port>` with `127.0.0.1` for a wildcard host (`0.0.0.0`, `::`).
    /// - Parameter port: the port the server is bound to (the real one when `port` is 0).
    public func advertiseURL(port: Int) -> String {
        if let nodeAdvertiseURL { return nodeAdvertiseURL }
        let address = host == "0.0.0.0" || host == "::" || host == "[::]" ? "127.0.0.1" : host
        return address.contains(":") && !address.hasPrefix("[") ? "http://[\(address)]:\(port)" : "http://\(address):\(port)"
    }

    /// The environment variable that sets `key`: `redis.url` → `ROOMCAST_REDIS_URL`.
    public static func environmentName(of key: String) -> String {
        "ROOMCAST_" + key.split(separator: ".").map { $0.uppercased() }.joined(separator: "_")
    }
}

/// Engine.IO timings and per-socket limits.
public struct SocketSettings: Sendable {
    /// How often the server pings each socket.
    public var pingInterval: Duration = .seconds(25)
    /// How long a socket may take to answer a ping before it is closed.
    public var pingTimeout: Duration = .seconds(20)
    /// Largest frame accepted, in bytes; a bigger one closes the connection (1009).
    public var maxPayload: Int = 1_000_000
    /// How long a new connection may take to send its Socket.IO CONNECT.
    public var connectTimeout: Duration = .seconds(45)
    /// How long before its token expires a socket is sent `auth:expiring`, so that the app can
    /// send `auth:refresh` without losing the socket or its rooms.
    public var expiryWarning: Duration = .seconds(60)
    /// Bytes queued for one socket that does not read them (frames written while its
    /// connection cannot take more, or frames waiting for a poll) before it counts as too slow
    /// and is disconnected. Each frame counts its size plus ``OutboundBudget/perFrameBytes``.
    public var outboundQueueBytes: Int = 4 * 1024 * 1024
    /// Bytes of received packets waiting to be handled for one socket (a client that sends
    /// without waiting for its acks) before it is disconnected; at least `maxPayload`.
    public var inboundQueueBytes: Int = 2 * 1024 * 1024
    /// permessage-deflate on WebSocket connections (`websocket.compression`, on by default) and
    /// the message size from which it is used (`websocket.compression_threshold_bytes`, 1024 as
    /// Engine.IO's own `perMessageDeflate.threshold`). Without context takeover either way, a
    /// connection keeps no zlib memory between messages, and a fan-out compresses an event once
    /// per event loop.
    public var compression = WebSocketCompression(isEnabled: true, thresholdBytes: 1024)
    /// Events one socket may send per second, on average; more get `rate_limited`.
    public var eventsPerSecond: Int = 50
    /// Events one socket may send at once before the rate applies.
    public var eventBurst: Int = 100
    /// Rooms one socket may have joined at a time.
    public var maxRooms: Int = 100
    /// Sockets one user may have connected at a time, over every node.
    public var maxSocketsPerUser: Int = 20
    /// Canvas previews (`element:drag`, `cursor:move`) relayed per second per element or cursor
    /// of a socket (`canvas.preview_hz`); faster ones are coalesced, the newest kept.
    public var previewRate: Int = 30
    /// How long a batch of published events for one event loop's sockets waits for more before
    /// it is written (`socket.flush_delay_us`, at most 1 ms); zero writes it at the loop's next
    /// turn, which already puts every event read in one go into one `writev` per socket.
    public var flushDelay: Duration = .zero

    /// Defaults.
    public init() {}
}
