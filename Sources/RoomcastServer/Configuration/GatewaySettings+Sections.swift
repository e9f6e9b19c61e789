import Foundation
import Logging
import RedisClient
import RoomcastCore
import WebSocketServer

// Every setting the node reads, declared once. The reader, `config/roomcast.yaml` (`roomcast
// config sample`) and `docs/operations/configuration.md` (`roomcast config reference`) are made
// from these; CONTRIBUTING.md says how to add one.

extension GatewaySettings {
    /// Every section, in the order of the reference and the sample; settings are read in this order.
    public static let sections: [Section] = [
        listening, redisSection, log, jwt, auth, rooms, messages, elements, rate, http, engineIO, socketSection, canvas, webSocket,
        shutdown, presence, pubSub, node, notificationsSection, apns, fcm, push,
    ]

    /// The declared setting whose whole key is `key` (`redis.url`), retired ones included.
    public static func setting(_ key: String) -> Setting? {
        sections.lazy.flatMap(\.settings).first { $0.key == key }
    }

    static let listening = Section(
        nil, title: "Listening",
        "Where the node accepts connections: the REST API, long-polling and WebSocket share one port.",
        [
            .text(
                "host", .at(\.host), allowed: "an address or host name", example: "0.0.0.0", flag: "host",
                "Address to listen on: `0.0.0.0` or `::` for every interface.",
                parse: { (text) throws(Setting.Refusal) in
                    guard !text.isEmpty else { throw Setting.Refusal("must not be empty") }
                    return text
                }
            ),
            .integer("port", .at(\.port), in: 0...65535, flag: "port", "TCP port to listen on; `0` takes any free port (the ready line names it)."),
        ]
    )

    static let redisSection = Section(
        "redis", title: "Redis",
        """
        How the node reaches Redis, which holds all state and relays events between nodes: one server \
        (`redis://`), or a Redis Cluster (`redis-cluster://`) found through any of its nodes, the seeds, with the \
        credentials used for every node and database 0 only; `rediss://` and `rediss-cluster://` are the same over \
        TLS. User and password may be percent-encoded; an IPv6 host goes in brackets. Every connection sends `AUTH` \
        and `SELECT` as needed and names itself in `CLIENT LIST`: `roomcast-gateway`, and `roomcast-subscriber` for \
        pub/sub. TLS, durable acks and failover are described in `docs/operations/redis.md`.
        """,
        [
            .value(
                "url",
                // Where Redis is, not how the client behaves: the other redis.* settings stay as they are.
                Field(get: { $0.redis }, set: { $0.redis.endpoint = $1.endpoint; $0.redis.mode = $1.mode; $0.redis.tls = $1.tls }),
                allowed: """
                    `redis://[[user]:password@]host[:port][/db]` or `redis-cluster://[[user]:password@]host:port,host:port,...`; \
                    `rediss://`, `rediss-cluster://` over TLS
                    """,
                flag: "redis-url", secret: true,
                example: "redis://redis.internal:6380/2", isText: true,
                "Where Redis is: one server, or a cluster through its seeds. When it holds a password, prefer `ROOMCAST_REDIS_URL` to the file.",
                parse: { (text) throws(Setting.Refusal) in
                    do throws(RedisError) {
                        return try RedisConfiguration(url: text)
                    } catch {
                        throw Setting.Refusal(error.message)
                    }
                },
                render: { $0.urlWithoutCredentials }
            ),
            .integer(
                "pool_size", .at(\.redis.poolSize), in: 1...64,
                "Connections the node keeps to Redis (to each master of a cluster); commands are pipelined over all of them."
            ),
            .duration(
                "command_timeout_ms", .at(\.redis.commandTimeout), .milliseconds, in: 1...600_000,
                """
                Longest wait for one command's reply, the wait for a connection included. A Redis Cluster refusing \
                every command while a failing master's replica takes over (`CLUSTERDOWN`) is waited out within it.
                """
            ),
            .text(
                "tls_ca_file", .at(optional: \.redisTLS.caFile), allowed: "a PEM file (or a directory of them)", example: "/etc/roomcast/redis-ca.pem",
                whenUnset: "the system's trust store",
                """
                With a `rediss://` URL: the certificate authorities Redis's certificates must be signed by. Read when \
                the node starts; one it cannot read stops it.
                """
            ),
            .text(
                "tls_cert_file", .at(optional: \.redisTLS.certificateFile), allowed: "a PEM file", example: "/etc/roomcast/redis-client.pem",
                whenUnset: "none: no client certificate is shown",
                """
                With a `rediss://` URL: the certificate the node shows to a Redis that asks for one (`tls-auth-clients`), \
                with `redis.tls_key_file`.
                """
            ),
            .text(
                "tls_key_file", .at(optional: \.redisTLS.keyFile), allowed: "a PEM file", example: "/etc/roomcast/redis-client.key",
                whenUnset: "none", "The private key of `redis.tls_cert_file`."
            ),
            .text(
                "tls_server_name", .at(optional: \.redisTLS.serverName), allowed: "a DNS name", example: "redis.internal",
                whenUnset: "the host connected to: its name, or its address checked against the certificate's IP entries",
                """
                With a `rediss://` URL: the name every Redis certificate must carry, sent as the TLS server name. For a \
                cluster whose nodes announce addresses while their certificates name the service.
                """
            ),
            .integer(
                "wait_replicas", .at(\.redisWait.replicas), in: 0...16,
                """
                Durable acks: a change is acknowledged once this many replicas have it (`WAIT`); when fewer do within \
                `redis.wait_timeout_ms` it is answered `unavailable`. `0`: the master's reply is enough. A master \
                without that many replicas connected refuses every change in its rooms.
                """
            ),
            .duration(
                "wait_timeout_ms", .at(\.redisWait.timeout), .milliseconds, in: 1...600_000,
                """
                With `redis.wait_replicas`: how long a change waits for the replicas before it is answered `unavailable`; \
                shorter than `redis.command_timeout_ms`.
                """
            ),
        ]
    )

    static let log = Section(
        "log", title: "Logs",
        "What the node logs to standard error, and how. The ready line (`roomcast ready on http://...`) goes to standard output.",
        [
            .choice("level", .at(\.logLevel), Logger.Level.allCases.map { ($0.rawValue, $0) }, flag: "log-level", "Lowest level logged."),
            .choice(
                "format", .at(\.logFormat), LogFormat.allCases.map { ($0.rawValue, $0) }, flag: "log-format",
                "`text` for people; `json` for log collectors, one JSON object per line."
            ),
        ]
    )

    static let jwt = Section(
        "jwt", title: "Tokens",
        """
        Tokens are HS256 JWTs whose `sub` is the user id. The node issues them at registration and login, and accepts \
        any token its key signed, another issuer's included. `scripts/run.sh` makes a random secret in \
        `var/jwt-secret` on first use unless `ROOMCAST_JWT_SECRET` is set.
        """,
        [
            .text(
                "secret", .at(optional: \.jwtSecret), allowed: "32 bytes or more", example: "replace-with-32-or-more-random-bytes", secret: true,
                whenUnset: "none; required to serve",
                "The key that signs and verifies tokens. In production set it with `ROOMCAST_JWT_SECRET` rather than in the file.",
                parse: { (text) throws(Setting.Refusal) in
                    // HS256 with a short key is guessable, and jwt-kit asserts on it in debug builds.
                    guard text.utf8.count >= 32 else { throw Setting.Refusal("must be at least 32 bytes (it has \(text.utf8.count))") }
                    return text
                }
            ),
            .duration("ttl_seconds", .at(\.tokenLifetime), .seconds, in: 60...(365 * 24 * 3600), "How long a token the node issues is valid."),
        ]
    )

    static let auth = Section(
        "auth", title: "Authentication",
        "Password hashing, and the warning a socket gets before its token expires.",
        [
            .integer(
                "bcrypt_cost", .at(\.bcryptCost), in: 4...31,
                "bcrypt cost of password hashes: each step doubles the work of a registration and of a login."
            ),
            .duration(
                "expiry_warning_ms", .at(\.socket.expiryWarning), .milliseconds, in: 0...86_400_000,
                """
                A socket is sent `auth:expiring` this long before its token expires, so that the app can send \
                `auth:refresh` with a new token and keep the socket and its rooms.
                """
            ),
        ]
    )

    static let rooms = Section(
        "rooms", title: "Rooms",
        "The size of a room, and the room events kept for clients that reconnect.",
        [
            .integer("max_participants", .at(\.maxRoomParticipants), in: 2...1000, "Most participants a room may have, its creator included."),
            .integer("max_elements", .at(\.maxRoomElements), in: 1...1_000_000, "Most elements (notes, photos, stickers, ...) a room may hold."),
            .integer(
                "stream_length", .at(\.roomStreamLength), in: 10...10_000_000,
                """
                Room events kept in each room's stream, for clients that reconnect and recover the events they missed \
                by offset (approximately: Redis trims whole stream nodes).
                """
            ),
        ]
    )

    static let messages = Section(
        "messages", title: "Chat messages",
        "The chat of a room and its history.",
        [
            .integer(
                "max_length", .at(\.maxMessageLength), in: 1...1_000_000, unit: "bytes",
                "Longest chat message, in bytes of UTF-8; a longer one is `invalid_payload`."
            ),
            .integer(
                "kept_per_room", .at(\.messagesKeptPerRoom), in: 1...10_000_000,
                "Chat messages kept per room for the history (`GET /api/rooms/:roomId/messages`); the oldest go first."
            ),
        ]
    )

    static let elements = Section(
        "elements", title: "Canvas elements",
        "What one element of a canvas may hold.",
        [
            .integer(
                "max_content_length", .at(\.maxElementContentLength), in: 1...ElementFields.maximumContentLength, unit: "bytes",
                "Longest element `content` (a note's text), in bytes of UTF-8; a longer one is `invalid_payload`."
            )
        ]
    )

    static let rate = Section(
        "rate", title: "REST rate limits",
        """
        Limits on REST requests, counted in Redis so that they hold across nodes. A request over a limit is answered \
        429 `rate_limited` with `Retry-After`. Every limit counts over the same window.
        """,
        [
            .duration(
                "window_ms",
                Field(
                    get: { $0.requestLimits.loginsPerAccount.window },
                    set: { settings, window in
                        for limit in [\RequestLimits.Settings.loginsPerAccount, \.loginsPerAddress, \.mutationsPerUser] {
                            settings.requestLimits[keyPath: limit].window = window
                        }
                    }
                ),
                .milliseconds, in: 1000...86_400_000, "The window every limit below counts over."
            ),
            .integer(
                "logins_per_account", .at(\.requestLimits.loginsPerAccount.requests), in: 1...1_000_000,
                "Login attempts per username per window."
            ),
            .integer(
                "logins_per_address", .at(\.requestLimits.loginsPerAddress.requests), in: 1...1_000_000,
                "Login attempts per client address per window, and as many registrations besides."
            ),
            .integer(
                "rest_mutations_per_user", .at(\.requestLimits.mutationsPerUser.requests), in: 1...1_000_000,
                "REST changes (any method but `GET`, `HEAD` and `OPTIONS`) per user per window."
            ),
            .boolean(
                "trust_forwarded_for", .at(\.requestLimits.trustForwardedFor),
                """
                `true` behind your own proxy: the client address is then the last `X-Forwarded-For` entry, not the \
                proxy's. It counts for these limits and for `http.max_connections_per_address`. Leave it `false` when \
                clients reach the node directly: they could write the header themselves.
                """
            ),
        ]
    )

    static let http = Section(
        "http", title: "HTTP",
        "The HTTP server that carries the REST API, long-polling and WebSocket upgrades.",
        [
            .integer(
                "max_body_bytes", .at(\.maxRequestBodySize), in: 1024...(256 * 1024 * 1024), unit: "bytes",
                "Largest REST request body; a larger one is 413 `payload_too_large`."
            ),
            .duration(
                "idle_timeout_ms", .at(\.httpIdleTimeout), .milliseconds, in: 100...3_600_000,
                """
                How long a connection may go without a whole request in flight, from its opening or its last response \
                to the end of its next request (idle keep-alive, slow headers, slow bodies); then it is closed. A \
                draining node closes such connections at once. A proxy in front must let go of idle upstream \
                connections sooner.
                """
            ),
            .integer(
                "listen_backlog", .at(\.listenBacklog), in: 1...65_535,
                """
                Connections the kernel may hold accepted but not yet taken by the node. When every client of a \
                stopped node comes back at once, a short queue drops their connection attempts and each waits a \
                second or more to try again. The kernel caps it at `net.core.somaxconn`.
                """
            ),
            .integer(
                "max_connections_per_address", .at(\.maxConnectionsPerAddress), in: 1...1_000_000,
                """
                Connections one client address may hold on this node at once (connections forwarded by sibling nodes \
                not counted); more are closed as they are accepted. High enough for a carrier NAT of many phones. \
                Behind your own proxy set `rate.trust_forwarded_for`, or the proxy is what is counted.
                """
            ),
            .value(
                "cors_origins", .at(\.corsOrigins), allowed: "`*`, or `http(s)://host[:port]` origins separated by commas",
                example: "https://app.example.com", isText: true,
                """
                Browser origins allowed to use long-polling and the REST API across origins, or `*` for any. Empty: \
                same origin only.
                """,
                parse: { (text) throws(Setting.Refusal) in
                    guard let origins = CORSOrigins(setting: text) else {
                        throw Setting.Refusal("'\(text)' is not '*' or a comma-separated list of http(s)://host[:port] origins")
                    }
                    return origins
                },
                render: { origins in ((origins.any ? ["*"] : []) + origins.listed.sorted()).joined(separator: ",") }
            ),
        ]
    )

    static let engineIO = Section(
        "engineio", title: "Engine.IO",
        "The heartbeat and message limit of every connection; clients learn them in the Engine.IO handshake.",
        [
            .duration("ping_interval_ms", .at(\.socket.pingInterval), .milliseconds, in: 50...3_600_000, "How often the server pings each connection."),
            .duration(
                "ping_timeout_ms", .at(\.socket.pingTimeout), .milliseconds, in: 50...3_600_000,
                "How long a client may take to answer a ping before its connection is closed."
            ),
            .integer(
                "max_payload", .at(\.socket.maxPayload), in: 1024...(64 * 1024 * 1024), unit: "bytes",
                "Largest WebSocket message or long-polling request body accepted; a bigger WebSocket message closes the connection (1009)."
            ),
            .duration(
                "connect_timeout_ms", .at(\.socket.connectTimeout), .milliseconds, in: 50...3_600_000,
                "How long a new connection may take to send its Socket.IO `CONNECT`."
            ),
        ]
    )

    static let socketSection = Section(
        "socket", title: "Sockets",
        "What one socket may queue, send and join, and how published events are written to sockets.",
        [
            .integer(
                "outbound_queue_bytes", .at(\.socket.outboundQueueBytes), in: 1024...(1024 * 1024 * 1024), unit: "bytes",
                """
                Bytes held for a socket that does not read them (written while its connection cannot take more, or \
                waiting for a poll), each frame counted with \(OutboundBudget.perFrameBytes) bytes of bookkeeping; past \
                it the socket is closed (1008) as too slow.
                """
            ),
            .integer(
                "inbound_queue_bytes", .at(\.socket.inboundQueueBytes), in: 1024...(1024 * 1024 * 1024), unit: "bytes",
                """
                Bytes of received packets waiting to be handled for one socket (a client that does not wait for its \
                acks); past it the socket is closed (1008). Raised to `engineio.max_payload` + \
                \(OutboundBudget.perFrameBytes) when smaller, so that the largest packet fits.
                """
            ),
            .integer(
                "events_per_second", .at(\.socket.eventsPerSecond), in: 1...1_000_000,
                "Events one socket may send per second on average; more get `rate_limited`."
            ),
            .integer(
                "event_burst", .at(\.socket.eventBurst), in: 1...1_000_000,
                "Events one socket may send at once before `socket.events_per_second` applies."
            ),
            .integer("max_rooms", .at(\.socket.maxRooms), in: 1...100_000, "Rooms one socket may be in at a time; more get `limit_exceeded`."),
            .integer(
                "max_per_user", .at(\.socket.maxSocketsPerUser), in: 1...100_000,
                "Sockets one user may have connected at once, over every node; more are refused at `CONNECT` with `limit_exceeded`."
            ),
            .duration(
                "flush_delay_us", .at(\.socket.flushDelay), .microseconds, in: 0...1_000,
                """
                How long a batch of published events for one event loop's sockets waits for more before it is \
                written. At `0` it is written at the loop's next turn, which already puts every event read in one go \
                into one `writev` per socket.
                """
            ),
        ],
        finish: { settings in
            // One packet of the largest size must fit in the inbox.
            settings.socket.inboundQueueBytes = max(settings.socket.inboundQueueBytes, settings.socket.maxPayload + OutboundBudget.perFrameBytes)
        }
    )

    static let canvas = Section(
        "canvas", title: "Canvas previews",
        "Live previews of a canvas being edited: elements dragged and cursors moved.",
        [
            .integer(
                "preview_hz", .at(\.socket.previewRate), in: 1...240, unit: "per second",
                """
                Previews (`element:drag`, `cursor:move`) relayed per second for each element or cursor of a socket; \
                faster ones are coalesced, the newest kept. A socket may send 4 times this many previews a second \
                (apart from `socket.events_per_second`); more get `rate_limited`.
                """
            )
        ]
    )

    static let webSocket = Section(
        "websocket", title: "WebSocket compression",
        """
        permessage-deflate (RFC 7692), negotiated without context takeover: a connection keeps no zlib memory between \
        messages, and a fan-out compresses an event once per event loop.
        """,
        [
            .choice(
                "compression", .at(\.socket.compression.isEnabled), [("on", true), ("off", false)], aliases: [("true", true), ("false", false)],
                "Whether permessage-deflate is offered to clients that ask for it."
            ),
            .integer(
                "compression_threshold_bytes", .at(\.socket.compression.thresholdBytes), in: 0...(64 * 1024 * 1024), unit: "bytes",
                "Messages shorter than this go uncompressed."
            ),
        ]
    )

    static let shutdown = Section(
        "shutdown", title: "Shutdown",
        """
        On SIGTERM a node drains: it stops accepting, ends its sockets as lost connections (WebSockets closed with \
        1001, pending polls answered 503) so that their clients reconnect to another node, and lets mutations under \
        way finish.
        """,
        [
            .duration(
                "drain_timeout_ms", .at(\.drainTimeout), .milliseconds, in: 100...3_600_000,
                "Longest drain; what is left after it is cancelled and the node exits."
            )
        ]
    )

    static let presence = Section(
        "presence", title: "Presence",
        """
        A socket's presence in a room, and its place in its user's socket count, live as long as its node: once the \
        node's registry entry expires (`node.ttl_ms`), the other nodes remove them and announce it.
        """,
        [
            .duration(
                "backstop_ms", .at(\.presenceBackstop), .milliseconds, in: 300...86_400_000,
                """
                Each presence entry also expires this long after its node last refreshed it (nodes refresh every \
                third of it): a backstop, for entries no node's index names.
                """
            ),
            .retired(
                "ttl_ms",
                reason: "was replaced: a crashed node's presence now goes with its registry entry (node.ttl_ms); members' own expiry is presence.backstop_ms",
                "`node.ttl_ms` (a crashed node's presence goes with its registry entry) and `presence.backstop_ms` (a member's own expiry)."
            ),
        ]
    )

    static let pubSub = Section(
        "pubsub", title: "Pub/sub",
        """
        Nodes relay room events over Redis pub/sub. After its link breaks, a node reads back the events its sockets \
        missed from the rooms' streams.
        """,
        [
            .duration(
                "gap_read_timeout_ms", .at(\.gapReadTimeout), .milliseconds, in: 100...3_600_000,
                """
                How long reading back missed room events is retried while Redis refuses (a restarted cluster answers \
                `CLUSTERDOWN` for a few seconds); then the room's sockets are closed, and their clients reconnect and \
                recover by offset.
                """
            )
        ]
    )

    static let node = Section(
        "node", title: "Node registry",
        """
        Each node registers itself in Redis (`node:{<id>}`) with its address and a heartbeat: nodes forward \
        long-polling requests to the node that holds the session, and remove a crashed node's sockets.
        """,
        [
            .text(
                "advertise_url", .at(optional: \.nodeAdvertiseURL), allowed: "an `http://host[:port]` base URL", example: "http://10.0.0.5:8080",
                whenUnset: "`http://<host>:<port>`, with `127.0.0.1` for a wildcard host (`0.0.0.0`, `::`)",
                """
                The base URL other nodes reach this one at. Set it when nodes run on different machines. Nodes \
                forward to each other over plain HTTP on their private network: an `https://` URL stops start-up.
                """,
                parse: { (text) throws(Setting.Refusal) in
                    guard !text.isEmpty else { return nil }
                    let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
                    // Forwarding (NodeAddressBook, ForwardingHandler) speaks plain HTTP to the node's
                    // socket address: an https URL would break every forwarded poll and upgrade.
                    if URLComponents(string: trimmed)?.scheme?.lowercased() == "https" {
                        throw Setting.Refusal(
                            "'\(text)': nodes forward to each other over plain HTTP only; give the node's own http:// address on the private network, not the public TLS one"
                        )
                    }
                    guard let components = URLComponents(string: trimmed), components.scheme == "http",
                        components.host?.isEmpty == false, components.path.isEmpty, components.query == nil
                    else {
                        throw Setting.Refusal("'\(text)' is not a base URL such as http://10.0.0.5:8080")
                    }
                    return trimmed
                }
            ),
            .duration(
                "ttl_ms", .at(\.nodeTTL), .milliseconds, in: 300...3_600_000,
                """
                A node's registry entry lives this long without a heartbeat (sent every third of it). A crashed node \
                drops out within this time, a stopped one at once; the other nodes then remove its sockets' presence \
                and socket counts at their next heartbeat, so a crashed node's users leave rooms within about 1⅓ of it.
                """
            ),
        ]
    )
}

extension RedisConfiguration {
    /// The URL of these servers without user or password: a default, or a value in a test, never a secret.
    fileprivate var urlWithoutCredentials: String {
        func address(_ endpoint: RedisEndpoint) -> String {
            let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
            return "\(host):\(endpoint.port)"
        }
        let secure = tls == nil ? "" : "s"
        switch mode {
        case .standalone: return "redis\(secure)://\(address(endpoint))" + (endpoint.database == 0 ? "" : "/\(endpoint.database)")
        case .cluster(let seeds): return "redis\(secure)-cluster://" + seeds.map(address).joined(separator: ",")
        }
    }
}
